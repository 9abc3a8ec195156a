import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { enqueueEvent, newId, topics } from "@corridor/kit";
import { ClockAdvancedSchema, SandboxEventSchema } from "@corridor/proto/corridor/sandbox/v1/events_pb.js";
import type { Transaction } from "kysely";

/**
 * Producer of corridor.sandbox.v1 (key: platform id), inside the caller's transaction: a platform's
 * sandbox clock moved, so its timers kept elsewhere (the ledger's quote expiries) fire as the
 * sandbox's own scheduled outcomes do.
 */
export async function emitClockAdvanced(
  trx: Transaction<any>,
  c: { platformId: string; sandboxNow: Date; offsetMs: bigint; realAt: Date },
): Promise<void> {
  const eventId = newId("Event");
  await enqueueEvent(trx, {
    topic: topics.sandbox,
    key: c.platformId,
    eventId,
    eventType: "SANDBOX_CLOCK_ADVANCED",
    schema: SandboxEventSchema,
    message: create(SandboxEventSchema, {
      eventId,
      occurredAt: timestampFromDate(c.realAt),
      platformId: c.platformId,
      payload: {
        case: "clockAdvanced",
        value: create(ClockAdvancedSchema, { now: timestampFromDate(c.sandboxNow), offsetMs: c.offsetMs, realAt: timestampFromDate(c.realAt) }),
      },
    }),
  });
}
