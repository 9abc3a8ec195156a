import { ledgerTransactionConsumer } from "@corridor/kit";
import { transactionFacts } from "../clients/ledger.js";
import type { LedgerOutcomes } from "../domain/ledger-outcomes.js";

/**
 * corridor.ledger.v1 → actions: an agent's transaction that fails fails its action. The host's
 * inbox runs this once per event id, inside a transaction of the agents schema.
 */
export function ledgerOutcomesConsumer(outcomes: LedgerOutcomes) {
  return ledgerTransactionConsumer({
    name: "agent-transactions",
    // Only the agents' own rows (spend and action state): no money locks, so batches are safe.
    batch: true,
    accepts: (t) => t.agentId !== "",
    handle: (trx, change) => outcomes.onTransactionChanged(trx, change.platformId, transactionFacts(change.transaction)),
  });
}
