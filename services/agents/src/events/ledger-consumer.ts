import { topics, type ConsumerDefinition } from "@corridor/kit";
import { LedgerEventSchema } from "@corridor/proto/corridor/ledger/v1/events_pb.js";
import { transactionFacts } from "../clients/ledger.js";
import type { LedgerOutcomes } from "../domain/ledger-outcomes.js";

/**
 * corridor.ledger.v1 → actions: an agent's transaction that fails fails its action. The host's
 * inbox runs this once per event id, inside a transaction of the agents schema.
 */
export function ledgerOutcomesConsumer(outcomes: LedgerOutcomes): ConsumerDefinition<typeof LedgerEventSchema> {
  return {
    name: "agent-transactions",
    topic: topics.ledger,
    schema: LedgerEventSchema,
    eventId: (e) => e.eventId,
    async handle(e, trx) {
      if (e.payload.case !== "transactionChanged") return;
      const t = e.payload.value.transaction;
      if (!t?.agentId) return;
      await outcomes.onTransactionChanged(trx, e.platformId, transactionFacts(t));
    },
  };
}
