import type { Clock } from "@corridor/kit";
import { FAILED_TRANSACTION_STATUSES } from "./execution.js";
import type { TransactionFacts } from "./model.js";
import type { Store } from "./ports.js";
import { failAction } from "./transitions.js";

/**
 * What the ledger's transaction events mean for actions (docs/agents.md): an agent's transaction
 * that ends FAILED, REJECTED, REFUNDED or EXPIRED fails its APPROVED action (EXECUTION_FAILED,
 * reservation back). Runs inside the host's inbox transaction, so it asks no other service: the
 * event itself carries the transaction, and the action's stored quote snapshot goes in its event.
 */
export function createLedgerOutcomes(deps: { store: Store; clock: Clock }) {
  return {
    async onTransactionChanged(trx: unknown, platformId: string, t: TransactionFacts): Promise<void> {
      if (!t.agentId) return;
      const tx = deps.store.within(trx);
      const failed = FAILED_TRANSACTION_STATUSES.has(t.status);
      // One at a time with the recorder of this transaction's execution outcome.
      await tx.lockTransactionKey(platformId, t.id);
      const found = await tx.actionByTransaction(platformId, t.id);
      if (!found) {
        // The ledger answered the execution but its event overtook our commit of the answer: the
        // recorder finds the failure here.
        if (failed) await tx.recordEarlyOutcome(platformId, t, deps.clock.now());
        return;
      }
      if (!failed || found.status !== "APPROVED") {
        // Nothing changes but what the action last saw of its transaction (list pages show it).
        await tx.saveTransactionSnapshot(platformId, found.id, t.snapshot);
        return;
      }
      // Agent first, then the action: the order every path locks in.
      await tx.lockAgent(platformId, found.agentId);
      const current = await tx.lockAction(platformId, found.id);
      if (!current || current.status !== "APPROVED") return;
      const detail = t.failureReason ? ` (${t.failureReason})` : "";
      await failAction(tx, current, "EXECUTION_FAILED", `The transaction ended ${t.status}${detail}`, deps.clock.now(), { transactionSnapshot: t.snapshot });
    },
  };
}

export type LedgerOutcomes = ReturnType<typeof createLedgerOutcomes>;
