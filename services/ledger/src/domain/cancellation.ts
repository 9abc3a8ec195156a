import { instructionTopic, SANDBOX_CONNECTOR } from "@corridor/connector";
import { errors, type Clock, type Logger } from "@corridor/kit";
import type { TransactionRow } from "./model.js";
import type { LedgerStore } from "./ports.js";
import { authorizationTransition, failedEventType, TRANSFER_FAILURE_REASON } from "./transactions.js";

/** failureDetail of a transaction its platform cancelled before the rail had it. */
export const CANCELLED = "CANCELLED";

/** failureReason of a cancelled quote transaction (nothing was executed: the quote failed to execute). */
const QUOTE_CANCELLED_REASON = "QUOTE_EXECUTION_FAILED";

const notCancellable = (tx: TransactionRow, why: string) =>
  errors.conflict("TRANSACTION_NOT_CANCELLABLE", `Transaction ${tx.id} cannot be cancelled: ${why}`, { transactionId: tx.id, status: tx.status });

/**
 * POST /transactions/{id}/cancel (Grid's cancelTransaction): a transaction the rail does not have
 * yet is cancelled, one the rail has (or may have) is not.
 *
 * - A PENDING transfer (in or out) whose rail instruction is still in the ledger's outbox, neither
 *   published nor leased by a relay: the instruction is deleted there, so no connector ever sees
 *   it; an outgoing transfer's hold goes back to the available balance.
 * - A PENDING quote transaction not executed, or one still waiting for strong customer
 *   authentication (PENDING_AUTHORIZATION): no instruction exists yet (it goes out on execution)
 *   and nothing is held.
 * Either ends FAILED (failureDetail CANCELLED) with its *_PAYMENT_FAILED event; quotes-fx follows
 * (the quote FAILED), notifications sends the webhook. Everything else is 409
 * TRANSACTION_NOT_CANCELLABLE: PROCESSING and beyond, a transfer whose instruction a relay has
 * taken (the hand-off), a lookup's CREATED transaction (no payment yet: nothing to cancel), an
 * incoming UMA payment (the platform rejects it instead).
 *
 * Exactly once under concurrency: the transaction's row is locked first, so two cancels, a cancel
 * and an execution, or a cancel and a rail outcome serialize on it; the outbox row is locked `skip
 * locked` against the relay (src/data/rail-handoff.ts): whichever takes it first wins, the other
 * sees it gone or leased. The hold is settled once (settleHold only ends an ACTIVE hold).
 */
export function createCancellation(deps: { store: LedgerStore; clock: Clock; log?: Pick<Logger, "info"> }) {
  const { store, clock } = deps;
  return {
    async cancelTransaction(platformId: string, id: string, reason = ""): Promise<TransactionRow> {
      const existing = await store.getTransaction(platformId, id);
      if (!existing) throw errors.notFound("Transaction", id);
      const result = await store.transaction(async (trx) => {
        const tx = (await trx.getTransaction(platformId, id, true))!;
        // A quote's transaction that waits for SCA is cancelled like a PENDING one (nothing is held yet).
        const waiting = tx.quote_id !== null && authorizationTransition(tx.status, "CANCELLED") === "FAILED";
        if (tx.status !== "PENDING" && !waiting) return notCancellable(tx, tx.status === "CREATED" ? "it is a receiver lookup's transaction, no payment yet" : `it is ${tx.status}`);
        const isQuote = tx.quote_id !== null;
        if (isQuote) {
          // A quote's PENDING is the wait for execution; execution takes this row's lock too and
          // finds it FAILED. Nothing is held before execution.
          if (tx.executed_at) return notCancellable(tx, "its quote was executed");
        } else {
          if (tx.lookup_id || tx.source_type === "UMA_ADDRESS" || !tx.external_account_id) return notCancellable(tx, "it has no rail instruction to withdraw");
          const topic = instructionTopic(tx.connector ?? SANDBOX_CONNECTOR);
          if (!(await trx.withdrawRailInstruction(tx.id, topic))) return notCancellable(tx, "its rail instruction was already handed to the rail");
        }
        const now = clock.now();
        if (!isQuote && tx.type === "OUTGOING" && tx.internal_account_id) {
          const locked = await trx.lockAccounts(platformId, [tx.internal_account_id]);
          const released = await trx.settleHold(platformId, locked, tx.id, "RELEASED", now);
          if (released > 0n) await trx.emitBalanceUpdated(locked.get(tx.internal_account_id)!, now);
        }
        const updated = await trx.updateTransaction(platformId, tx.id, {
          status: "FAILED",
          failure_reason: isQuote ? QUOTE_CANCELLED_REASON : TRANSFER_FAILURE_REASON[tx.type],
          failure_detail: CANCELLED,
          settled_at: null,
          updated_at: now,
        });
        await trx.emitTransactionChanged(failedEventType(tx.type), updated, now);
        return updated;
      });
      if (result instanceof Error) throw result;
      // The reason is the platform's own note (Grid: "for debugging purposes"): logged, not stored.
      if (reason) deps.log?.info({ transactionId: id, platformId, reason: reason.slice(0, 200) }, "transaction cancelled");
      return result;
    },

    /**
     * POST /transactions/{id}/confirm (Grid's confirmReceiptDelivery): the platform delivered the
     * transaction's receipt to its customer at `at` (now when absent). Any transaction, any status;
     * again replaces the time. Not a payment event: no webhook.
     */
    async confirmReceiptDelivery(platformId: string, id: string, at?: Date): Promise<TransactionRow> {
      const now = clock.now();
      return store.transaction(async (trx) => {
        const tx = await trx.getTransaction(platformId, id, true);
        if (!tx) throw errors.notFound("Transaction", id);
        return trx.updateTransaction(platformId, id, { receipt_delivery_confirmed_at: at ?? now, updated_at: now });
      });
    },
  };
}
