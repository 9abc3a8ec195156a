import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { enqueueEvent, newId, topics } from "@corridor/kit";
import { RailOutcomeSchema } from "@corridor/proto/corridor/ledger/v1/rails_pb.js";
import type { Transaction } from "kysely";

/** Producer of corridor.rail-outcomes.v1, inside the caller's transaction. */
export async function emitRailOutcome(
  trx: Transaction<any>,
  o: { platformId: string; transactionId: string; status: string; reason: string; at: Date; expectedSettlementAt?: string },
): Promise<void> {
  const eventId = newId("Event");
  await enqueueEvent(trx, {
    topic: topics.railOutcomes,
    key: o.transactionId,
    eventId,
    eventType: `RAIL_${o.status}`,
    schema: RailOutcomeSchema,
    message: create(RailOutcomeSchema, {
      eventId,
      occurredAt: timestampFromDate(o.at),
      platformId: o.platformId,
      transactionId: o.transactionId,
      status: o.status,
      reason: o.reason,
      expectedSettlementAt: o.expectedSettlementAt ? timestampFromDate(new Date(o.expectedSettlementAt)) : undefined,
    }),
  });
}
