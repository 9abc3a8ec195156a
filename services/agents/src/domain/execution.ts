import { AppError, type Clock, type Logger } from "@corridor/kit";
import type { Action, FailureReason, TransactionFacts } from "./model.js";
import type { LedgerPort, QuotesPort, Store } from "./ports.js";
import { changeAction, failAction } from "./transitions.js";

/**
 * Runs an APPROVED action whose execution is claimed (execution_state EXECUTING): the call to
 * quotes-fx or the ledger happens with no transaction open, with an idempotency key derived from
 * the action id, and its outcome is committed afterwards. A crash or an unreachable service leaves
 * the claim in place; the recovery worker makes the same call again later, and the other service
 * answers it as the first.
 */

/** Ledger transaction statuses after which nothing moved (or the money came back). */
export const FAILED_TRANSACTION_STATUSES = new Set(["FAILED", "REJECTED", "REFUNDED", "EXPIRED"]);
const FAILED_QUOTE_STATUSES = new Set(["FAILED", "EXPIRED"]);

/** The idempotency key of an action's execution at quotes-fx or the ledger. */
export const executionKey = (actionId: string) => `agent-action/${actionId}`;

/**
 * A refusal is an answer: the other service looked at the request and said no (any outcome but
 * RATE_LIMITED and UNAVAILABLE). Anything else (unreachable, 5xx, a key still in flight there) may pass.
 */
export function isRefusal(err: unknown): err is AppError {
  if (!(err instanceof AppError)) return false;
  if (err.code === "IDEMPOTENCY_KEY_IN_USE") return false;
  return !["RATE_LIMITED", "UNAVAILABLE"].includes(err.outcome);
}

function failureOf(err: AppError): { reason: FailureReason; message: string } {
  if (err.code === "INSUFFICIENT_BALANCE") return { reason: "INSUFFICIENT_BALANCE", message: err.message };
  if (err.code === "QUOTE_EXPIRED") return { reason: "QUOTE_EXPIRED", message: err.message };
  return { reason: "EXECUTION_FAILED", message: `${err.code}: ${err.message}` };
}

interface Outcome {
  transactionId: string | null;
  quoteSnapshot?: Uint8Array;
  transactionSnapshot?: Uint8Array;
  /** The answer already shows a failed payment. */
  failedStatus?: string;
  refusal?: { reason: FailureReason; message: string };
}

export interface Executor {
  /** Executes the claimed action and answers it as recorded (still EXECUTING if the call did not get through). */
  execute(action: Action): Promise<Action>;
}

export function createExecutor(deps: { store: Store; quotes: QuotesPort; ledger: LedgerPort; clock: Clock; log: Pick<Logger, "warn" | "info"> }): Executor {
  const { store, clock } = deps;

  async function call(a: Action): Promise<Outcome> {
    if (a.type === "EXECUTE_QUOTE") {
      const q = await deps.quotes.execute({ platformId: a.platformId, quoteId: a.quoteId!, agentId: a.agentId, idempotencyKey: executionKey(a.id) });
      // The quote's transaction too, so the action (and its event) shows it; a read that fails only leaves it out.
      const t = q.transactionId ? await deps.ledger.transaction(a.platformId, q.transactionId).catch(() => undefined) : undefined;
      return {
        transactionId: q.transactionId || null,
        quoteSnapshot: q.snapshot,
        transactionSnapshot: t?.snapshot,
        failedStatus: FAILED_QUOTE_STATUSES.has(q.status) ? q.status : t && FAILED_TRANSACTION_STATUSES.has(t.status) ? t.status : undefined,
      };
    }
    const t: TransactionFacts = await deps.ledger.transfer({
      direction: a.type === "TRANSFER_IN" ? "IN" : "OUT",
      platformId: a.platformId,
      agentId: a.agentId,
      customerId: a.customerId,
      sourceAccountId: a.sourceAccountId,
      destinationAccountId: a.destinationAccountId,
      amount: a.amount,
      description: a.description,
      idempotencyKey: executionKey(a.id),
    });
    return { transactionId: t.id, transactionSnapshot: t.snapshot, failedStatus: FAILED_TRANSACTION_STATUSES.has(t.status) ? t.status : undefined };
  }

  /** Commits the outcome, unless someone else finished the action meanwhile. */
  async function record(a: Action, o: Outcome): Promise<Action> {
    return store.transaction(async (tx) => {
      // The ledger's event about this transaction may be handled right now: one at a time.
      if (o.transactionId) await tx.lockTransactionKey(a.platformId, o.transactionId);
      await tx.lockAgent(a.platformId, a.agentId);
      const current = await tx.lockAction(a.platformId, a.id);
      if (!current || current.status !== "APPROVED" || current.executionState !== "EXECUTING") return current ?? a;
      const at = clock.now();
      const seen = {
        transactionId: o.transactionId ?? current.transactionId,
        quoteSnapshot: o.quoteSnapshot ?? current.quoteSnapshot,
        transactionSnapshot: o.transactionSnapshot ?? current.transactionSnapshot,
      };
      if (o.refusal) return failAction(tx, current, o.refusal.reason, o.refusal.message, at, seen);
      // An event may have told of this transaction's failure before we knew its id.
      const early = o.transactionId ? await tx.earlyOutcome(a.platformId, o.transactionId) : undefined;
      const failed = o.failedStatus ?? (early && FAILED_TRANSACTION_STATUSES.has(early.status) ? early.status : undefined);
      if (failed) {
        const snapshot = early?.snapshot ?? seen.transactionSnapshot;
        return failAction(tx, current, "EXECUTION_FAILED", `The transaction ended ${failed}`, at, { ...seen, transactionSnapshot: snapshot });
      }
      return changeAction(tx, current, { ...seen, executionState: "EXECUTED", executionClaimedAt: null }, at);
    });
  }

  return {
    async execute(a) {
      let outcome: Outcome;
      try {
        outcome = await call(a);
      } catch (err) {
        if (!isRefusal(err)) {
          deps.log.warn({ err, actionId: a.id }, "execution did not get through; the recovery worker retries it");
          return a;
        }
        outcome = { transactionId: null, refusal: failureOf(err) };
      }
      return record(a, outcome);
    },
  };
}
