import { ledgerTransactionConsumer, topics } from "@corridor/kit";
import { transactionFacts } from "../clients/ledger.js";
import type { LedgerOutcomes } from "../domain/ledger-outcomes.js";

/**
 * The ledger's agent transactions (corridor.ledger.agent-transactions.v1 and
 * .agent-quote-transactions.v1; corridor.ledger.v1 before) → actions: an agent's transaction that fails fails its action. The host's
 * inbox runs this once per event id, inside a transaction of the agents schema.
 */
export function ledgerOutcomesConsumer(outcomes: LedgerOutcomes) {
  return ledgerTransactionConsumer({
    name: "agent-transactions",
    topics: [topics.ledgerAgentTransactions, topics.ledgerAgentQuoteTransactions],
    // Only the agents' own rows (spend and action state): no money locks, so batches are safe.
    batch: true,
    accepts: (t) => t.agentId !== "",
    handle: (trx, change) => outcomes.onTransactionChanged(trx, change.platformId, transactionFacts(change.transaction)),
  });
}
