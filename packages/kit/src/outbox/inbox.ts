import { fromBinary } from "@bufbuild/protobuf";
import { propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Span } from "@opentelemetry/api";
import type { Kysely } from "kysely";
import type { Bus, BusMessage, Subscription } from "../bus/types.js";
import type { Logger } from "../log.js";
import type { ConsumerDefinition } from "../service.js";
import { recordInboxHandling } from "../telemetry/instruments.js";
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
 * whose parent is the producer's trace context from the message headers. A consumer with
 * `batch` set handles the messages that arrive together in one such transaction (handleBatch).
 */
export async function subscribeConsumer(opts: SubscribeConsumerOptions): Promise<Subscription> {
  const { def } = opts;
  const db = opts.db as Kysely<KitTables>;
  const group = `${opts.service}.${def.name}`;
  const log = opts.log.child({ consumer: group, topic: def.topic });
  const tracer = trace.getTracer(TRACER_NAME);

  const messaging = {
    "messaging.system": opts.bus.kind === "kafka" ? "kafka" : "in-process",
    "messaging.operation.type": "process",
    "messaging.destination.name": def.topic,
    "messaging.consumer.group.name": group,
  };

  // Bounded: the consumer group and topic are fixed by the code.
  const metricAttributes = { "messaging.consumer.group.name": group, "messaging.destination.name": def.topic };

  /** Runs `fn` in a CONSUMER span whose parent is the message's producer. */
  const inSpan = <T>(message: BusMessage, fn: (span: Span) => Promise<T>): Promise<T> =>
    tracer.startActiveSpan(
      `${def.topic} process`,
      { kind: SpanKind.CONSUMER, attributes: { ...messaging, "messaging.message.id": message.headers["event-id"] ?? "" } },
      propagation.extract(ROOT_CONTEXT, message.headers),
      async (span) => {
        const started = performance.now();
        try {
          const result = await fn(span);
          recordInboxHandling((performance.now() - started) / 1000, metricAttributes);
          return result;
        } catch (err) {
          recordInboxHandling((performance.now() - started) / 1000, metricAttributes, err);
          span.recordException(err as Error);
          span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error)?.message });
          throw err;
        } finally {
          span.end();
        }
      },
    );

  /** The message's event, or undefined when this consumer ignores it. */
  const decode = (message: BusMessage) => {
    const event = fromBinary(def.schema, message.value);
    const eventId = def.eventId(event) || message.headers["event-id"];
    if (!eventId) throw new Error(`event on ${def.topic} has no event id; cannot deduplicate`);
    return def.relevant && !def.relevant(event) ? undefined : { event, eventId };
  };

  const handle = async (message: BusMessage) => {
    // An event this consumer ignores costs its decoding and nothing more: no span, no transaction
    // (consumers of the ledger's topic skip most of its events). One that cannot be decoded fails
    // inside the span below, so the failure is traced.
    let early: ReturnType<typeof decode> | null = null;
    try {
      early = decode(message);
      if (!early) return;
    } catch {
      early = null;
    }
    try {
      await inSpan(message, async (span) => {
        const decoded = early ?? decode(message)!;
        const ran = await inTransaction(db, async (trx) => {
          const fresh = await trx
            .insertInto("inbox")
            .values({ consumer: group, event_id: decoded.eventId })
            .onConflict((oc) => oc.columns(["consumer", "event_id"]).doNothing())
            .returning("event_id")
            .executeTakeFirst();
          if (!fresh) return false;
          await def.handle(decoded.event, trx);
          return true;
        });
        if (!ran) log.debug({ event_id: decoded.eventId }, "duplicate delivery ignored");
        span.setAttribute("corridor.inbox.duplicate", !ran);
      });
    } catch (err) {
      log.warn({ err, event_id: message.headers["event-id"] }, "consumer failed; the bus will redeliver");
      throw err;
    }
  };

  /**
   * A consumer with `batch` set handles the messages that arrived together in one transaction:
   * one inbox INSERT for all their event ids, then each fresh event's handler in order, one
   * commit. If that transaction fails, each message is handled again in a transaction of its
   * own, so one bad message fails alone and the others still go through (or are recognised).
   */
  const handleBatch = async (messages: BusMessage[]) => {
    let decoded: { message: BusMessage; event: unknown; eventId: string }[];
    try {
      decoded = messages.flatMap((message) => {
        const d = decode(message);
        return d ? [{ message, ...d }] : [];
      });
    } catch {
      for (const m of messages) await handle(m);
      return;
    }
    if (decoded.length <= 1) {
      for (const d of decoded) await handle(d.message);
      return;
    }
    try {
      await inTransaction(db, async (trx) => {
        const fresh = await trx
          .insertInto("inbox")
          .values(decoded.map((d) => ({ consumer: group, event_id: d.eventId })))
          .onConflict((oc) => oc.columns(["consumer", "event_id"]).doNothing())
          .returning("event_id")
          .execute();
        const toRun = new Set(fresh.map((r) => r.event_id));
        for (const d of decoded) {
          // A duplicate within the batch runs once: the first copy takes the id.
          if (!toRun.delete(d.eventId)) continue;
          await inSpan(d.message, async (span) => {
            span.setAttribute("corridor.inbox.batch", decoded.length);
            await def.handle(d.event as never, trx);
          });
        }
      });
    } catch (err) {
      log.debug({ err, messages: messages.length }, "batch failed; handling its messages one by one");
      for (const m of messages) await handle(m);
    }
  };

  return opts.bus.subscribe({ group, topics: [def.topic], handle, ...(def.batch ? { handleBatch } : {}) });
}
