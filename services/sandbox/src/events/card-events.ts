import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { enqueueEvent, newId, topics } from "@corridor/kit";
import { CardIssuedSchema, SandboxEventSchema } from "@corridor/proto/corridor/sandbox/v1/events_pb.js";
import type { Transaction } from "kysely";
import type { ProvisionedCard } from "../domain/card-issuer.js";

/** Producer of corridor.sandbox.v1 CardIssued (key: platform id), inside the consumer's inbox transaction. */
export async function emitCardIssued(trx: Transaction<any>, c: { platformId: string; card: ProvisionedCard; at: Date }): Promise<void> {
  const eventId = newId("Event");
  await enqueueEvent(trx, {
    topic: topics.sandbox,
    key: c.platformId,
    eventId,
    eventType: "SANDBOX_CARD_ISSUED",
    schema: SandboxEventSchema,
    message: create(SandboxEventSchema, {
      eventId,
      occurredAt: timestampFromDate(c.at),
      platformId: c.platformId,
      payload: { case: "cardIssued", value: create(CardIssuedSchema, { ...c.card }) },
    }),
  });
}
