import { fromBinary, type DescMessage } from "@bufbuild/protobuf";
import { propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Span } from "@opentelemetry/api";
import type { Kysely } from "kysely";
import type { Bus, BusMessage, FormerGroup, Subscription } from "../bus/types.js";
import type { Logger } from "../log.js";
import { consumerTopics, type ConsumerDefinition } from "../service.js";
import { recordInboxHandling } from "../telemetry/instruments.js";
import { TRACER_NAME } from "../telemetry/sdk.js";
import { inTransaction } from "./batch.js";
import { recordInbox } from "./statements.js";
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

export interface SubscribeServiceOptions {
  /** The consuming service's schema-scoped database (DatabaseHandle.forSchema). */
  db: Kysely<any>;
  bus: Bus;
  /** Service name: the consumer group (`serviceConsumerGroup`); each consumer's inbox is `${service}.${def.name}`. */
  service: string;
  consumers: ConsumerDefinition<any>[];
  log: Logger;
}

/** The one consumer group of a service's consumers (docs/events.md, "Consumer groups"). */
export function serviceConsumerGroup(service: string): string {
  return service;
}

/** A consumer's inbox name: `${service}.${def.name}`, which was also its consumer group before a service had one. */
export function inboxName(service: string, def: Pick<ConsumerDefinition, "name">): string {
  return `${service}.${def.name}`;
}

/**
 * Subscribes all of a service's consumers under one consumer group (the service's name): each
 * message is fetched, decoded and acknowledged once for the service, and handed to the consumers
 * of its topic. Exactly-once holds per consumer: each keeps its own inbox name
 * (`${service}.${def.name}`). On Kafka, the group's first start takes its offsets over from the
 * per-consumer groups of before (SubscribeOptions.formerGroups).
 *
 * Each delivery runs in one transaction that first records (inbox name, event id) in the inbox
 * and only then runs the handler; a duplicate finds the row and does nothing; a handler error
 * rolls both back, the other consumers still handle the delivery, and the error is rethrown so
 * the bus delivers it again (the consumers that went through recognise it; the one that failed
 * handles nothing after it in that delivery, keeping its order). Consumers marked `batch` share
 * transactions: the messages that arrived together, and the consumers of one message, in one
 * transaction (one multi-row inbox INSERT, each fresh event's handler in order, one commit); if
 * it fails, each (message, consumer) is handled again in a transaction of its own, so a bad one
 * fails alone. A batched consumer with `handleMany` is handed its fresh events of the batch
 * together (falling back to `handle` one by one the same way). Other consumers get a transaction
 * per event, after the batched ones. Each
 * consumer sees its events in the order of the topic; there is no order between consumers. A
 * message a consumer keeps refusing holds its partition (its key, in-process) for the whole
 * service, where it held only that consumer's group before. A consumer marked `idempotent` gets
 * no inbox row: its handler is run in the same transactions and recognises a repeat itself.
 * A consumer of several topics (its topics and former topics) is handed each one's messages.
 */
export async function subscribeService(opts: SubscribeServiceOptions): Promise<Subscription> {
  const group = serviceConsumerGroup(opts.service);
  // A consumer's former group read what are now its former topics (the topics before the routing
  // by audience), or its topics when they did not change.
  const formerGroups: FormerGroup[] = opts.consumers.map((def) => ({ group: inboxName(opts.service, def), topics: def.formerTopics?.length ? [...def.formerTopics] : consumerTopics(def) }));
  return subscribeHandlers({ ...opts, group, formerGroups });
}

/**
 * Subscribes one consumer under a group of its own, `${service}.${def.name}` (the inbox name): a
 * deployable with a single consumer (a rail connector). Same inbox, transactions and batching as
 * subscribeService.
 */
export async function subscribeConsumer(opts: SubscribeConsumerOptions): Promise<Subscription> {
  return subscribeHandlers({ db: opts.db, bus: opts.bus, service: opts.service, consumers: [opts.def], log: opts.log, group: inboxName(opts.service, opts.def) });
}

/** One consumer as the dispatcher runs it. */
interface Handler {
  def: ConsumerDefinition<any>;
  /** Inbox name, and the consumer's name in spans and metrics. */
  name: string;
  /** The topics it reads (consumerTopics). */
  topics: string[];
  log: Logger;
  /** `together`: the other messages handled in the same call (handleMany), linked from the span. */
  inSpan<T>(message: BusMessage, fn: (span: Span) => Promise<T>, together?: readonly BusMessage[]): Promise<T>;
}

/** A message's event for one consumer. */
interface Work {
  handler: Handler;
  message: BusMessage;
  event: unknown;
  eventId: string;
}

async function subscribeHandlers(opts: SubscribeServiceOptions & { group: string; formerGroups?: FormerGroup[] }): Promise<Subscription> {
  const db = opts.db as Kysely<KitTables>;
  const { group } = opts;
  const tracer = trace.getTracer(TRACER_NAME);
  const names = new Set<string>();

  const handler = (def: ConsumerDefinition<any>): Handler => {
    const name = inboxName(opts.service, def);
    if (names.has(name)) throw new Error(`two consumers of ${opts.service} are named ${def.name}`);
    names.add(name);
    const messaging = {
      "messaging.system": opts.bus.kind === "kafka" ? "kafka" : "in-process",
      "messaging.operation.type": "process",
      "messaging.consumer.group.name": group,
      "corridor.consumer": name,
    };
    const topicsRead = consumerTopics(def);
    return {
      def,
      name,
      topics: topicsRead,
      log: opts.log.child({ consumer: name, topic: topicsRead.join(",") }),
      /**
       * Runs `fn` in a CONSUMER span whose parent is the message's producer; the producers of the
       * messages handled `together` with it are the span's links (OpenTelemetry's way for a batch),
       * so each of their traces reaches the span that consumed it.
       */
      inSpan: (message, fn, together) => {
        const links = (together ?? []).flatMap((m) => {
          const context = trace.getSpanContext(propagation.extract(ROOT_CONTEXT, m.headers));
          return context && trace.isSpanContextValid(context) ? [{ context, attributes: { "messaging.message.id": m.headers["event-id"] ?? "" } }] : [];
        });
        // Bounded: consumer names and topics are fixed by the code. Metrics stay per consumer (its
        // inbox name, which was its group before a service had one), so dashboards keep their series.
        const metricAttributes = { "messaging.consumer.group.name": name, "messaging.destination.name": message.topic };
        return tracer.startActiveSpan(
          `${message.topic} process`,
          { kind: SpanKind.CONSUMER, links, attributes: { ...messaging, "messaging.destination.name": message.topic, "messaging.message.id": message.headers["event-id"] ?? "" } },
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
      },
    };
  };

  const byTopic = new Map<string, Handler[]>();
  for (const def of opts.consumers) {
    const h = handler(def);
    for (const topic of h.topics) {
      const list = byTopic.get(topic) ?? [];
      list.push(h);
      byTopic.set(topic, list);
    }
  }

  /**
   * The events of `messages` for the consumers of their topic, in message order: one decoding per
   * message and envelope type, whatever the number of consumers. An event a consumer ignores
   * (`relevant`) costs nothing more: no span, no transaction, no inbox row. Throws when a message
   * cannot be decoded or has no event id.
   */
  const decode = (messages: BusMessage[]): Work[] => {
    const works: Work[] = [];
    for (const message of messages) {
      const decoded = new Map<DescMessage, unknown>();
      for (const h of byTopic.get(message.topic) ?? []) {
        let event = decoded.get(h.def.schema);
        if (event === undefined) {
          event = fromBinary(h.def.schema, message.value);
          decoded.set(h.def.schema, event);
        }
        if (h.def.relevant && !h.def.relevant(event as never)) continue;
        const eventId = h.def.eventId(event as never) || message.headers["event-id"];
        if (!eventId) throw new Error(`event on ${message.topic} has no event id; cannot deduplicate`);
        works.push({ handler: h, message, event, eventId });
      }
    }
    return works;
  };

  /** One consumer's event in a transaction of its own. */
  const runAlone = async (w: Work): Promise<void> => {
    const h = w.handler;
    try {
      await h.inSpan(w.message, async (span) => {
        const ran = await inTransaction(db, async (trx) => {
          if (h.def.idempotent) {
            await h.def.handle(w.event as never, trx);
            return true;
          }
          const fresh = await recordInbox(trx, [{ consumer: h.name, event_id: w.eventId }]);
          if (fresh.length === 0) return false;
          await h.def.handle(w.event as never, trx);
          return true;
        });
        if (!ran) h.log.debug({ event_id: w.eventId }, "duplicate delivery ignored");
        span.setAttribute("corridor.inbox.duplicate", !ran);
      });
    } catch (err) {
      h.log.warn({ err, event_id: w.eventId }, "consumer failed; the bus will redeliver");
      throw err;
    }
  };

  /**
   * The works their consumer admits (ConsumerDefinition.admit): one call per consumer and
   * delivery, before any transaction, given the database to record what it refuses (autocommit).
   * A consumer whose admit throws is handed all of its works.
   */
  const admitted = async (works: Work[]): Promise<Work[]> => {
    const asking = new Map<Handler, Work[]>();
    for (const w of works) {
      if (!w.handler.def.admit) continue;
      const list = asking.get(w.handler);
      if (list) list.push(w);
      else asking.set(w.handler, [w]);
    }
    if (asking.size === 0) return works;
    const refused = new Set<Work>();
    await Promise.all(
      [...asking].map(async ([h, ws]) => {
        try {
          const verdicts = await h.def.admit!(ws.map((w) => w.event as never), opts.db);
          ws.forEach((w, i) => {
            if (verdicts[i] === false) refused.add(w);
          });
        } catch (err) {
          h.log.debug({ err, events: ws.length }, "admit failed; handling every event");
        }
      }),
    );
    return refused.size === 0 ? works : works.filter((w) => !refused.has(w));
  };

  /**
   * Runs the works of a delivery: the batched consumers' together, then the others' one by one.
   * A consumer that fails stops there for this delivery (its later events wait, keeping its
   * order); the other consumers carry on, and the delivery then fails with the first error, so
   * the bus delivers it again and the inbox skips what went through.
   */
  const runWorks = async (all: Work[]): Promise<void> => {
    const works = await admitted(all);
    const failed = new Set<Handler>();
    let firstError: unknown;
    const alone = async (w: Work) => {
      if (failed.has(w.handler)) return;
      try {
        await runAlone(w);
      } catch (err) {
        failed.add(w.handler);
        firstError ??= err;
      }
    };
    const together = works.filter((w) => w.handler.def.batch);
    if (together.length === 1) await alone(together[0]!);
    else if (together.length > 1) {
      try {
        await inTransaction(db, async (trx) => {
          // Sorted: two transactions recording overlapping batches (a partition handed over
          // between replicas) wait on each other's rows in one order, never in a cycle.
          const recorded = together
            .filter((w) => !w.handler.def.idempotent)
            .map((w) => ({ consumer: w.handler.name, event_id: w.eventId }))
            .sort((a, b) => (a.consumer < b.consumer ? -1 : a.consumer > b.consumer ? 1 : a.event_id < b.event_id ? -1 : a.event_id > b.event_id ? 1 : 0));
          const fresh = await recordInbox(trx, recorded);
          const toRun = new Set(fresh.map((r) => `${r.consumer}\u0000${r.event_id}`));
          const ranIdempotent = new Set<string>();
          // What runs, in order: a work alone, or all of a handleMany consumer's works at the place
          // of its first one.
          const runs: Work[][] = [];
          const many = new Map<Handler, Work[]>();
          for (const w of together) {
            const id = `${w.handler.name}\u0000${w.eventId}`;
            // A duplicate within the batch runs once: the first copy takes the id. An idempotent
            // consumer has no inbox row: its handler recognises what it did before.
            if (w.handler.def.idempotent) {
              if (ranIdempotent.has(id)) continue;
              ranIdempotent.add(id);
            } else if (!toRun.delete(id)) continue;
            if (!w.handler.def.handleMany) runs.push([w]);
            else {
              const list = many.get(w.handler);
              if (list) list.push(w);
              else {
                const first = [w];
                many.set(w.handler, first);
                runs.push(first);
              }
            }
          }
          for (const run of runs) {
            const w = run[0]!;
            await w.handler.inSpan(w.message, async (span) => {
              span.setAttribute("corridor.inbox.batch", together.length);
              if (!w.handler.def.handleMany) return w.handler.def.handle(w.event as never, trx);
              // One span for the events handled together, under the first one's producer and
              // linked to the others'.
              span.setAttribute("corridor.inbox.handled_together", run.length);
              await w.handler.def.handleMany(
                run.map((x) => x.event as never),
                trx,
              );
            }, run.slice(1).map((x) => x.message));
          }
        });
      } catch (err) {
        opts.log.debug({ err, consumer: group, events: together.length }, "batch failed; handling its events one by one");
        for (const w of together) await alone(w);
      }
    }
    for (const w of works) if (!w.handler.def.batch) await alone(w);
    if (failed.size > 0) throw firstError;
  };

  /**
   * Messages of one topic (one partition on Kafka), in order. Resolves once every consumer of the
   * topic has processed every one of them; throws to have them all delivered again.
   */
  const handleMessages = async (messages: BusMessage[]): Promise<void> => {
    let works: Work[];
    try {
      works = decode(messages);
    } catch (err) {
      // A message that cannot be decoded fails inside a span of each consumer of its topic (so
      // the failure is traced and counted); the ones before it go through first.
      for (const message of messages) {
        let mine: Work[];
        try {
          mine = decode([message]);
        } catch (e) {
          const h = byTopic.get(message.topic)?.[0];
          if (!h) throw e;
          h.log.warn({ err: e, event_id: message.headers["event-id"] }, "consumer failed; the bus will redeliver");
          await h.inSpan(message, async () => {
            throw e;
          });
          throw err;
        }
        await runWorks(mine);
      }
      return;
    }
    await runWorks(works);
  };

  const batchTopics = [...byTopic].filter(([, hs]) => hs.some((h) => h.def.batch)).map(([topic]) => topic);
  return opts.bus.subscribe({
    group,
    topics: [...byTopic.keys()],
    handle: (message) => handleMessages([message]),
    ...(batchTopics.length > 0 ? { handleBatch: handleMessages, batchTopics } : {}),
    ...(opts.formerGroups?.length ? { formerGroups: opts.formerGroups } : {}),
  });
}
