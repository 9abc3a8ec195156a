import { topics, type Clock, type ConsumerDefinition } from "@corridor/kit";
import type { Transaction } from "kysely";
import type { MessageShape } from "@bufbuild/protobuf";
import { LedgerEventSchema } from "@corridor/proto/corridor/ledger/v1/events_pb.js";
import { recordAwaitingFromEvent } from "../data/incoming-approvals.js";
import type { QuotesFxDatabase } from "../data/tables.js";

/**
 * Every incoming UMA payment the ledger creates gets an incoming_approvals row, even when this
 * service died between the ledger's answer and the request path's own insert: the row comes from
 * the ledger's INCOMING_PAYMENT_PENDING event (written in the ledger's transaction, delivered at
 * least once), so the approval-timeout worker eventually fails a payment nobody decided instead of
 * leaving it PENDING forever.
 */
/** A PENDING incoming UMA payment the ledger just created: the only event this consumer acts on. */
function awaitsApproval(e: MessageShape<typeof LedgerEventSchema>): boolean {
  if (e.eventType !== "INCOMING_PAYMENT_PENDING" || e.payload.case !== "transactionChanged") return false;
  const t = e.payload.value.transaction;
  return !!t && t.type === "INCOMING" && t.source?.type === "UMA_ADDRESS" && t.status === "PENDING";
}

export function incomingGuardConsumer(clock: Clock): ConsumerDefinition<typeof LedgerEventSchema> {
  return {
    name: "incoming-approval-guards",
    // An incoming UMA payment's INCOMING_PAYMENT_PENDING, on its own topic (the kit's ledgerEventTopic).
    topic: topics.ledgerIncomingApprovals,
    formerTopics: [topics.ledger],
    schema: LedgerEventSchema,
    eventId: (e) => e.eventId,
    relevant: awaitsApproval,
    async handle(e, trx) {
      if (!awaitsApproval(e) || e.payload.case !== "transactionChanged") return;
      await recordAwaitingFromEvent(trx as Transaction<QuotesFxDatabase>, { platformId: e.platformId, transactionId: e.payload.value.transaction!.id, now: clock.now() });
    },
  };
}
