import { fromBinary } from "@bufbuild/protobuf";
import { propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import type { Kysely } from "kysely";
import type { Bus, Subscription } from "../bus/types.js";
import type { Logger } from "../log.js";
import type { ConsumerDefinition } from "../service.js";
import { TRACER_NAME } from "../telemetry/sdk.js";
import { inTransaction } from "./batch.js";
import type { KitTables } from "./tables.js";

export interface SubscribeConsumerOptions {
  /** The consuming service's schema-scoped database (DatabaseHandle.forSchema). */
  db: Kysely<any>;
  bus: Bus;
  /** Service name; the consumer group is `${service}.${def.name}`. */
  service: string;
  def: ConsumerDefinition<any>;
  log: Logger;
}

/**
 * Subscribes a service's consumer with the inbox around it: each delivery runs in one
 * transaction that first records (consumer, event id) in the inbox and only then runs the
 * handler. A duplicate delivery finds the row and does nothing; a handler error rolls both back
 * and is rethrown so the bus delivers the message again. The handler runs in a CONSUMER span
 * whose parent is the producer's trace context from the message headers.
 */
export async function subscribeConsumer(opts: SubscribeConsumerOptions): Promise<Subscription> {
  const { def } = opts;
  const db = opts.db as Kysely<KitTables>;
  const group = `${opts.service}.${def.name}`;
  const log = opts.log.child({ consumer: group, topic: def.topic });
  const tracer = trace.getTracer(TRACER_NAME);

  return opts.bus.subscribe({
    group,
    topics: [def.topic],
    handle: async (message) => {
      const parent = propagation.extract(ROOT_CONTEXT, message.headers);
      await tracer.startActiveSpan(
        `${def.topic} process`,
        {
          kind: SpanKind.CONSUMER,
          attributes: {
            "messaging.system": opts.bus.kind === "kafka" ? "kafka" : "in-process",
            "messaging.operation.type": "process",
            "messaging.destination.name": def.topic,
            "messaging.consumer.group.name": group,
            "messaging.message.id": message.headers["event-id"] ?? "",
          },
        },
        parent,
        async (span) => {
          try {
            const event = fromBinary(def.schema, message.value);
            const eventId = def.eventId(event) || message.headers["event-id"];
            if (!eventId) throw new Error(`event on ${def.topic} has no event id; cannot deduplicate`);
            if (def.relevant && !def.relevant(event)) {
              span.setAttribute("corridor.inbox.irrelevant", true);
              return;
            }
            const ran = await inTransaction(db, async (trx) => {
              const fresh = await trx
                .insertInto("inbox")
                .values({ consumer: group, event_id: eventId })
                .onConflict((oc) => oc.columns(["consumer", "event_id"]).doNothing())
                .returning("event_id")
                .executeTakeFirst();
              if (!fresh) return false;
              await def.handle(event, trx);
              return true;
            });
            if (!ran) log.debug({ event_id: eventId }, "duplicate delivery ignored");
            span.setAttribute("corridor.inbox.duplicate", !ran);
          } catch (err) {
            span.recordException(err as Error);
            span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error)?.message });
            log.warn({ err, event_id: message.headers["event-id"] }, "consumer failed; the bus will redeliver");
            throw err;
          } finally {
            span.end();
          }
        },
      );
    },
  });
}
