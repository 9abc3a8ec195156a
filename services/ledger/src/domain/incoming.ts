import { MAX_AMOUNT, errors, newId, type Clock, type FieldError } from "@corridor/kit";
import { accountType } from "./accounts.js";
import { newReference } from "./funding.js";
import type { Idempotent } from "./idempotency.js";
import { SYSTEM_TYPES, type TransactionRow } from "./model.js";
import type { AnswerCodec, Directory, LedgerStore } from "./ports.js";
import { candidateRails, type RailRouter } from "./rails.js";

export type IncomingDecision = "APPROVE" | "REJECT" | "FAIL";
/** Receiver data as stored: a map of strings (non-string JSON values are kept as their JSON text); null when empty. */
function receiverInfoJson(info: Record<string, unknown> | undefined): string | null {
  const entries = Object.entries(info ?? {}).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)] as const);
  return entries.length ? JSON.stringify(Object.fromEntries(entries)) : null;
}

/** The onward payout's description: this prefix and the INCOMING transaction's id (the link). */
export const ONWARD_PAYOUT_PREFIX = "Onward payout of incoming UMA payment ";
export const APPROVAL_FAILURE_REASONS: ReadonlySet<string> = new Set(["PAYMENT_APPROVAL_WEBHOOK_ERROR", "PAYMENT_APPROVAL_TIMED_OUT"]);

/**
 * Incoming UMA payments (issue 5). The transaction is PENDING while the platform decides (the
 * approval exchange runs in quotes-fx); approval credits the receiver's internal account from the
 * platform's RAIL_CLEARING in the receiving currency in one balanced entry (UMA_INCOMING).
 * Deposit account: the customer's internal account (INTERNAL_FIAT / INTERNAL_CRYPTO) in the
 * receiving currency; when the customer has a defaultUmaDepositAccount (external) in that currency,
 * the INCOMING transaction's destination is that external account and approval also starts an
 * onward transfer-out of the same amount to it (README "Incoming UMA payments").
 */
export function createIncoming(deps: { store: LedgerStore; clock: Clock; directory: Directory; idempotent: Idempotent; answers: AnswerCodec<TransactionRow>; rails: Pick<RailRouter, "route"> }) {
  const { store, clock, directory, idempotent } = deps;

  async function depositAccount(platformId: string, customerId: string, currency: string) {
    const row = await store.customerAccountOf(platformId, customerId, currency, accountType(currency));
    if (!row) {
      throw errors.badRequest("INVALID_CURRENCY", `The receiver has no ${currency} account (enable the currency on the customer first)`, { currency });
    }
    return row;
  }

  return {
    async createIncomingUmaPayment(i: {
      platformId: string;
      customerId: string;
      senderUmaAddress: string;
      receiverUmaAddress: string;
      currency: string;
      amount: bigint;
      idempotencyKey: string;
    }) {
      const fieldErrors: FieldError[] = [];
      if (!i.customerId) fieldErrors.push({ field: "customerId", reason: "is required" });
      if (!i.senderUmaAddress) fieldErrors.push({ field: "senderUmaAddress", reason: "is required" });
      if (!i.currency) fieldErrors.push({ field: "receivingCurrencyCode", reason: "is required" });
      if (i.amount < 1n || i.amount > MAX_AMOUNT) fieldErrors.push({ field: "receivingCurrencyAmount", reason: `must be an integer from 1 to ${MAX_AMOUNT}` });
      if (fieldErrors.length) throw errors.invalidInput(fieldErrors);
      return idempotent(
        {
          platformId: i.platformId,
          key: i.idempotencyKey,
          request: { op: "uma-receive", s: i.senderUmaAddress, r: i.receiverUmaAddress, c: i.currency, a: i.amount },
          codec: deps.answers,
        },
        async (complete) => {
          if ((await directory.environment(i.platformId)) !== "SANDBOX") throw errors.forbidden("Simulated UMA payments are for sandbox platforms only");
          const customer = await directory.customer(i.platformId, i.customerId);
          if (customer.isDeleted) throw errors.notFound("Customer", i.customerId);
          const account = await depositAccount(i.platformId, i.customerId, i.currency);
          const onward = await store.defaultDepositAccount(i.platformId, i.customerId, i.currency);
          return store.transaction(async (trx) => {
            const now = clock.now();
            // A payment for a deleted (or closing) customer is refused, never parked.
            await trx.requireOpenCustomer(i.platformId, i.customerId);
            const tx = await trx.insertTransaction({
              id: newId("Transaction"),
              platform_id: i.platformId,
              type: "INCOMING",
              status: "PENDING",
              source_type: "UMA_ADDRESS",
              source_account_id: "",
              destination_type: "ACCOUNT",
              // With a default UMA deposit account the money ends there (paid onward on approval).
              destination_account_id: onward?.id ?? account.id,
              internal_account_id: account.id,
              external_account_id: null,
              customer_id: i.customerId,
              platform_customer_id: customer.platformCustomerId || null,
              amount: i.amount,
              currency: i.currency,
              uma_address: i.senderUmaAddress,
              counterparty_information: JSON.stringify({ senderUmaAddress: i.senderUmaAddress, receiverUmaAddress: i.receiverUmaAddress }),
              reference: newReference("TXN"),
              description: "",
              agent_id: null,
              failure_reason: null,
              failure_detail: null,
              settled_at: null,
              created_at: now,
              updated_at: now,
            });
            await trx.emitTransactionChanged("INCOMING_PAYMENT_PENDING", tx, now);
            await complete(trx, tx);
            return tx;
          });
        },
      );
    },

    /** Decides a PENDING incoming UMA payment; any other state is answered as is (changed false). */
    async resolveIncomingPayment(i: { platformId: string; transactionId: string; decision: string; failureReason: string; detail: string; receiverCustomerInfo?: Record<string, unknown> }): Promise<{ tx: TransactionRow; changed: boolean }> {
      if (i.decision !== "APPROVE" && i.decision !== "REJECT" && i.decision !== "FAIL") {
        throw errors.invalidInput([{ field: "decision", reason: "must be APPROVE, REJECT or FAIL" }]);
      }
      if (i.decision === "FAIL" && !APPROVAL_FAILURE_REASONS.has(i.failureReason)) {
        throw errors.invalidInput([{ field: "failureReason", reason: `must be one of ${[...APPROVAL_FAILURE_REASONS].join(", ")}` }]);
      }
      const first = await store.getTransaction(i.platformId, i.transactionId);
      if (!first) throw errors.notFound("Transaction", i.transactionId);
      // Only incoming UMA payments await a platform decision; anything else is answered as is.
      if (first.type !== "INCOMING" || first.source_type !== "UMA_ADDRESS") return { tx: first, changed: false };
      // Opened before the money transaction (see quote-transactions.ts executionAccounts: no inserts under locks).
      const clearing = await store.systemAccountId(i.platformId, first.currency, SYSTEM_TYPES.railClearing, clock.now());
      // Where an onward payout to the default deposit account would go, decided before the money
      // transaction (routing may ask auth-sessions).
      const onwardAccount = first.destination_account_id !== first.internal_account_id ? await store.findExternalAccount(first.platform_id, first.destination_account_id) : undefined;
      const onwardRoute = onwardAccount && i.decision === "APPROVE" ? await deps.rails.route(first.platform_id, first.currency, candidateRails(onwardAccount.account_info)) : undefined;
      return store.transaction(async (trx) => {
        const tx = (await trx.getTransaction(i.platformId, i.transactionId, true))!;
        if (tx.status !== "PENDING") return { tx, changed: false };
        const now = clock.now();
        if (i.decision === "APPROVE") {
          const accountId = tx.internal_account_id!;
          // A destination other than the internal account is the default UMA deposit account chosen
          // at creation; if it was deleted since, the money stays in the internal account.
          const onward = tx.destination_account_id !== accountId ? await trx.findExternalAccount(tx.platform_id, tx.destination_account_id) : undefined;
          const locked = await trx.lockAccounts(tx.platform_id, [accountId, clearing]);
          await trx.postEntry(locked, {
            platformId: tx.platform_id,
            transactionId: tx.id,
            kind: "UMA_INCOMING",
            now,
            postings: [{ accountId: clearing, amount: -tx.amount }, { accountId, amount: tx.amount }],
          });
          let updated = await trx.updateTransaction(tx.platform_id, tx.id, {
            status: "COMPLETED",
            settled_at: now,
            updated_at: now,
            destination_account_id: onward ? onward.id : accountId,
            receiver_customer_info: receiverInfoJson(i.receiverCustomerInfo),
          });
          if (onward && onwardRoute) {
            // The onward leg is an ordinary transfer-out (hold now, rail PAYOUT, the connector's
            // outcome captures or releases the hold) in this same money transaction.
            const payoutId = newId("Transaction");
            const held = await trx.placeHold(locked.get(accountId)!, payoutId, tx.amount, now);
            await trx.emitBalanceUpdated(held, now);
            const payout = await trx.insertTransaction({
              id: payoutId,
              platform_id: tx.platform_id,
              type: "OUTGOING",
              status: "PENDING",
              source_account_id: accountId,
              destination_account_id: onward.id,
              internal_account_id: accountId,
              external_account_id: onward.id,
              customer_id: tx.customer_id,
              platform_customer_id: tx.platform_customer_id,
              amount: tx.amount,
              currency: tx.currency,
              reference: newReference("TXN"),
              description: `${ONWARD_PAYOUT_PREFIX}${tx.id}`,
              agent_id: null,
              failure_reason: null,
              failure_detail: null,
              settled_at: null,
              created_at: now,
              updated_at: now,
              connector: onwardRoute.connector,
              payment_rail: onwardRoute.paymentRail || null,
            });
            await trx.emitTransactionChanged("OUTGOING_PAYMENT_PENDING", payout, now);
            await trx.emitRailInstruction(payout, onward, onwardRoute, now);
          } else {
            await trx.emitBalanceUpdated(locked.get(accountId)!, now);
          }
          await trx.emitTransactionChanged("INCOMING_PAYMENT_COMPLETED", updated, now);
          return { tx: updated, changed: true };
        }
        const updated = await trx.updateTransaction(tx.platform_id, tx.id, {
          status: i.decision === "REJECT" ? "REJECTED" : "FAILED",
          failure_reason: i.decision === "FAIL" ? i.failureReason : null,
          failure_detail: i.detail || null,
          updated_at: now,
        });
        await trx.emitTransactionChanged("INCOMING_PAYMENT_FAILED", updated, now);
        return { tx: updated, changed: true };
      });
    },
  };
}
