import { create, type MessageShape } from "@bufbuild/protobuf";
import { trace } from "@opentelemetry/api";
import { PlatformEventSchema } from "@corridor/proto/corridor/auth_sessions/v1/events_pb.js";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import type { KyselyPlugin } from "kysely";
import { randomBytes } from "node:crypto";
import { createBus, createInProcessBus } from "../src/bus/index.js";
import type { Bus, BusMessage, SubscribeOptions } from "../src/bus/types.js";
import { migrateSchema, sql, type DatabaseHandle, type Kysely } from "../src/db/index.js";
import { createLogger } from "../src/log.js";
import { afterCommit, createOutboxRelay, enqueueEvent, inTransaction, outboxChannel, subscribeConsumer } from "../src/outbox/index.js";
import type { ConsumerDefinition } from "../src/service.js";
import { installTestTracing } from "../src/telemetry/index.js";
import { databaseKinds, openTestDatabase } from "./db-fixture.js";
import { seededRandom } from "../src/testing/seeded-random.js";

const log = createLogger("outbox-test", "silent");
const TOPIC = "corridor.test.v1";
const NO_MIGRATIONS = "/nonexistent/kit-test-migrations";

type PlatformEvent = MessageShape<typeof PlatformEventSchema>;

// The full path runs on the in-process bus always, and on Kafka when a broker is known.
const brokers = process.env.KAFKA_BROKERS?.split(",").filter(Boolean) ?? [];
const buses: { name: string; skip: boolean; make(): Promise<Bus> }[] = [
  { name: "in-process", skip: false, make: async () => createInProcessBus({ log, retryInitialMs: 5, retryMaxMs: 20 }) },
  {
    name: "kafka",
    skip: brokers.length === 0,
    make: () => createBus({ kafkaBrokers: brokers, clientId: "outbox-test", topicPrefix: `t${randomBytes(4).toString("hex")}.`, log }),
  },
];
const event = (n: number, platformId = "Platform:1"): PlatformEvent =>
  create(PlatformEventSchema, { eventId: `Event:${n}`, platformId });

async function enqueue(db: Kysely<any>, e: PlatformEvent): Promise<void> {
  await db.transaction().execute((trx) =>
    enqueueEvent(trx, { topic: TOPIC, key: e.platformId, eventId: e.eventId, eventType: "TEST", schema: PlatformEventSchema, message: e }),
  );
}

/** A bus that only records: publish() keeps messages; subscribe() hands back the handler to call. */
function recordingBus() {
  const published: BusMessage[] = [];
  let handler: SubscribeOptions["handle"] | undefined;
  let batchHandler: SubscribeOptions["handleBatch"] | undefined;
  const bus: Bus = {
    kind: "in-process",
    async publish(messages) {
      published.push(...messages);
    },
    async subscribe(opts) {
      handler = opts.handle;
      batchHandler = opts.handleBatch;
      return { close: async () => {} };
    },
    async close() {},
  };
  return {
    bus,
    published,
    deliver: (m: BusMessage) => handler!(m),
    /** What the consumer subscribed to take several messages at once with (undefined: one at a time only). */
    batchHandler: () => batchHandler,
    deliverBatch: (ms: BusMessage[]) => batchHandler!(ms),
  };
}

/** `db` with every statement that came back counted (BEGIN and COMMIT are not Kysely queries). */
function counting(db: Kysely<any>) {
  let statements = 0;
  // The kind of each statement sent, in order (a lease pass is a SelectQueryNode with its CTEs, a
  // mark on its own an UpdateQueryNode).
  const kinds: string[] = [];
  const plugin: KyselyPlugin = {
    transformQuery: ({ node }) => {
      kinds.push(node.kind);
      return node;
    },
    transformResult: async ({ result }) => {
      statements++;
      return result;
    },
  };
  return { db: db.withPlugin(plugin), statements: () => statements, kinds: () => [...kinds] };
}


/** A bus whose publishes wait until the test settles them, one call at a time. */
function holdingBus() {
  const calls: { messages: BusMessage[]; resolve(): void; reject(err: Error): void }[] = [];
  let arrived: (() => void) | undefined;
  const bus: Bus = {
    kind: "kafka",
    publish(messages) {
      return new Promise<void>((resolve, reject) => {
        calls.push({ messages, resolve, reject });
        arrived?.();
      });
    },
    async subscribe() {
      return { close: async () => {} };
    },
    async close() {},
  };
  /** Resolves once the n-th publish call has started. */
  const publishStarted = (n: number) =>
    calls.length >= n ? Promise.resolve() : new Promise<void>((r) => (arrived = () => calls.length >= n && r()));
  const ids = (i: number) => calls[i]!.messages.map((m) => m.headers["event-id"]);
  return { bus, calls, publishStarted, ids };
}

describe.each(databaseKinds)("outbox, relay and inbox on $kind", ({ kind, skip }) => {
  let handle: DatabaseHandle;
  let dispose: () => Promise<void>;
  let producer: Kysely<any>;
  let consumer: Kysely<any>;
  let schemaSeq = 0;

  beforeAll(async () => {
    if (skip) return;
    ({ handle, dispose } = await openTestDatabase(kind));
  });
  afterAll(async () => {
    await dispose?.();
  });

  // Two service schemas on one database, as in embedded mode; each test gets fresh ones.
  beforeEach(async (ctx) => {
    if (skip) return ctx.skip();
    schemaSeq++;
    await migrateSchema(handle, `producer_${schemaSeq}`, NO_MIGRATIONS);
    await migrateSchema(handle, `consumer_${schemaSeq}`, NO_MIGRATIONS);
    producer = handle.forSchema(`producer_${schemaSeq}`);
    consumer = handle.forSchema(`consumer_${schemaSeq}`);
    await consumer.schema
      .createTable("applied")
      .addColumn("n", "integer", (c) => c.generatedAlwaysAsIdentity())
      .addColumn("event_id", "text", (c) => c.notNull())
      .execute();
  });

  /** Event ids in the order the consumer applied them. */
  const applied = async () => (await consumer.selectFrom("applied").select("event_id").orderBy("n").execute()).map((r) => r.event_id);
  const inbox = async () => (await consumer.selectFrom("inbox").select(["consumer", "event_id"]).execute());

  function consumerDef(handle: (e: PlatformEvent, trx: Kysely<any>) => Promise<void>): ConsumerDefinition<typeof PlatformEventSchema> {
    return { name: "applier", topic: TOPIC, schema: PlatformEventSchema, eventId: (e) => e.eventId, handle };
  }
  const applyEvent = async (e: PlatformEvent, trx: Kysely<any>) => {
    await trx.insertInto("applied").values({ event_id: e.eventId }).execute();
  };
  /** A consumer that acts only on Platform:wanted, handed Event:1 (Platform:other) then Event:2 (Platform:wanted). */
  async function deliverIgnoredThenWanted(handle: (e: PlatformEvent, trx: Kysely<any>) => Promise<void>) {
    const rec = recordingBus();
    await subscribeConsumer({
      db: consumer,
      bus: rec.bus,
      service: "svc",
      def: { ...consumerDef(handle), relevant: (e: PlatformEvent) => e.platformId === "Platform:wanted" },
      log,
    });
    await enqueue(producer, event(1, "Platform:other"));
    await enqueue(producer, event(2, "Platform:wanted"));
    await createOutboxRelay({ db: producer, bus: rec.bus, log }).flush();
    for (const m of rec.published) await rec.deliver(m);
  }

  it("migrateSchema creates the kit's outbox, inbox and idempotency_keys tables in the service schema", async () => {
    const tables = await sql<{ table_name: string }>`
      select table_name from information_schema.tables where table_schema = ${`producer_${schemaSeq}`} order by table_name`.execute(handle.root);
    expect(tables.rows.map((r) => r.table_name)).toEqual(expect.arrayContaining(["idempotency_keys", "inbox", "outbox"]));
  });

  for (const b of buses) {
    it.skipIf(b.skip)(`carries events from the outbox through the relay and the ${b.name} bus into the consumer, once and in order`, async () => {
      const bus = await b.make();
      const relay = createOutboxRelay({ db: producer, bus, log, pollIntervalMs: 10 });
      const sub = await subscribeConsumer({ db: consumer, bus, service: "svc", def: consumerDef(applyEvent), log });
      relay.start();
      try {
        for (let n = 1; n <= 5; n++) await enqueue(producer, event(n));
        relay.nudge();
        const all = ["Event:1", "Event:2", "Event:3", "Event:4", "Event:5"];
        await vi.waitFor(async () => expect((await applied()).length).toBeGreaterThanOrEqual(5), { timeout: 20_000, interval: 10 });
        expect(await applied()).toEqual(all);
        expect((await inbox()).map((r) => `${r.consumer} ${r.event_id}`).sort()).toEqual(all.map((id) => `svc.applier ${id}`));
        // The relay marks rows once the bus has them durably — after the consumers ran, for the
        // in-process bus — so the mark may land a moment after the last consumer committed.
        const published = async () => producer.selectFrom("outbox").select(["event_id", "published_at", "headers"]).orderBy("id").execute();
        await vi.waitFor(async () => expect((await published()).every((r) => r.published_at instanceof Date)).toBe(true), { timeout: 5_000, interval: 10 });
        const rows = await published();
        expect(rows.map((r) => r.event_id)).toEqual(all);
        expect(rows[0]!.headers).toMatchObject({ "event-id": "Event:1", "event-type": "TEST", "content-type": "application/x-protobuf" });
      } finally {
        await sub.close();
        await relay.stop();
        await bus.close();
      }
    });
  }

  it("never publishes an event whose transaction rolled back", async () => {
    const rec = recordingBus();
    const relay = createOutboxRelay({ db: producer, bus: rec.bus, log });
    await producer
      .transaction()
      .execute(async (trx) => {
        await enqueueEvent(trx, { topic: TOPIC, key: "k", eventId: "Event:rolled-back", eventType: "TEST", schema: PlatformEventSchema, message: event(9) });
        throw new Error("change failed");
      })
      .catch(() => {});
    await enqueue(producer, event(10));
    expect(await relay.flush()).toBe(1);
    expect(rec.published.map((m) => m.headers["event-id"])).toEqual(["Event:10"]);
  });

  it("writes a transaction's events in one INSERT at its commit, in the order they were enqueued, and none when it rolls back", async () => {
    const rec = recordingBus();
    const relay = createOutboxRelay({ db: producer, bus: rec.bus, log });
    const emit = (trx: Kysely<any>, n: number) =>
      enqueueEvent(trx, { topic: TOPIC, key: `k${n % 2}`, eventId: `Event:${n}`, eventType: "TEST", schema: PlatformEventSchema, message: event(n) });
    const committed: string[] = [];
    await inTransaction(producer, async (trx) => {
      for (const n of [3, 1, 2]) await emit(trx, n);
      // Held for the commit: the transaction itself sees no row yet.
      expect(await trx.selectFrom("outbox").select("event_id").execute()).toEqual([]);
      expect(afterCommit(trx, () => committed.push("first"))).toBe(true);
    });
    expect(committed).toEqual(["first"]);
    await expect(
      inTransaction(producer, async (trx) => {
        await emit(trx, 4);
        afterCommit(trx, () => committed.push("rolled back"));
        throw new Error("change failed");
      }),
    ).rejects.toThrow("change failed");
    expect(committed).toEqual(["first"]);
    // Outside inTransaction an event is written at once, and afterCommit refuses.
    await producer.transaction().execute(async (trx) => {
      await emit(trx, 5);
      expect((await trx.selectFrom("outbox").select("event_id").execute()).map((r) => r.event_id)).toContain("Event:5");
      expect(afterCommit(trx, () => committed.push("unmanaged"))).toBe(false);
    });
    const rows = await producer.selectFrom("outbox").select(["id", "event_id"]).orderBy("id").execute();
    expect(rows.map((r) => r.event_id)).toEqual(["Event:3", "Event:1", "Event:2", "Event:5"]);
    expect(await relay.flush()).toBe(4);
    expect(rec.published.map((m) => m.headers["event-id"])).toEqual(["Event:3", "Event:1", "Event:2", "Event:5"]);
    expect(committed).toEqual(["first"]);
  });

  it("runs the handler once when the same event is delivered twice", async () => {
    const rec = recordingBus();
    let calls = 0;
    await subscribeConsumer({
      db: consumer,
      bus: rec.bus,
      service: "svc",
      def: consumerDef(async (e, trx) => {
        calls++;
        await applyEvent(e, trx);
      }),
      log,
    });
    await enqueue(producer, event(1));
    await createOutboxRelay({ db: producer, bus: rec.bus, log }).flush();
    const message = rec.published[0]!;
    await rec.deliver(message);
    await rec.deliver(message);
    expect(calls).toBe(1);
    expect(await applied()).toEqual(["Event:1"]);
    expect(await inbox()).toHaveLength(1);
  });

  it("acknowledges an event its consumer declares irrelevant without a transaction or an inbox row, and still handles the relevant ones", async () => {
    const handled: string[] = [];
    await deliverIgnoredThenWanted(async (e, trx) => {
      handled.push(e.eventId);
      await applyEvent(e, trx);
    });
    expect(handled).toEqual(["Event:2"]);
    expect(await applied()).toEqual(["Event:2"]);
    expect((await inbox()).map((r) => r.event_id)).toEqual(["Event:2"]);
  });

  it("takes messages that arrive together only when the consumer is batched", async () => {
    const plain = recordingBus();
    await subscribeConsumer({ db: consumer, bus: plain.bus, service: "svc", def: consumerDef(applyEvent), log });
    expect(plain.batchHandler()).toBeUndefined();
    const batched = recordingBus();
    await subscribeConsumer({ db: consumer, bus: batched.bus, service: "svc", def: { ...consumerDef(applyEvent), batch: true }, log });
    expect(batched.batchHandler()).toBeTypeOf("function");
  });

  it("handles a batch in one transaction: each fresh event once and in order, duplicates (in the batch or the inbox) and irrelevant events skipped", async () => {
    const rec = recordingBus();
    const handled: string[] = [];
    const transactions = new Set<unknown>();
    await subscribeConsumer({
      db: consumer,
      bus: rec.bus,
      service: "svc",
      def: {
        ...consumerDef(async (e, trx) => {
          handled.push(e.eventId);
          transactions.add(trx);
          await applyEvent(e, trx);
        }),
        relevant: (e: PlatformEvent) => e.platformId !== "Platform:other",
        batch: true,
      },
      log,
    });
    for (const n of [1, 2, 3, 4, 5]) await enqueue(producer, event(n, n === 4 ? "Platform:other" : "Platform:1"));
    await createOutboxRelay({ db: producer, bus: rec.bus, log }).flush();
    const [m1, m2, m3, m4, m5] = rec.published as [BusMessage, BusMessage, BusMessage, BusMessage, BusMessage];
    await rec.deliver(m2);
    handled.length = 0;
    transactions.clear();
    await rec.deliverBatch([m3, m1, m2, m3, m4, m5]);
    expect(handled).toEqual(["Event:3", "Event:1", "Event:5"]);
    expect(transactions.size).toBe(1);
    expect(await applied()).toEqual(["Event:2", "Event:3", "Event:1", "Event:5"]);
    expect((await inbox()).map((r) => r.event_id).sort()).toEqual(["Event:1", "Event:2", "Event:3", "Event:5"]);
    // The whole batch again changes nothing.
    await rec.deliverBatch([m1, m2, m3, m4, m5]);
    expect(handled).toHaveLength(3);
  });

  it("when a batch's transaction fails, handles its messages one by one: the bad one fails alone and rolls back alone", async () => {
    const rec = recordingBus();
    const attempts = new Map<string, number>();
    await subscribeConsumer({
      db: consumer,
      bus: rec.bus,
      service: "svc",
      def: {
        ...consumerDef(async (e, trx) => {
          attempts.set(e.eventId, (attempts.get(e.eventId) ?? 0) + 1);
          await applyEvent(e, trx);
          if (e.eventId === "Event:3") throw new Error("poison");
        }),
        batch: true,
      },
      log,
    });
    for (const n of [1, 2, 3, 4]) await enqueue(producer, event(n));
    await createOutboxRelay({ db: producer, bus: rec.bus, log }).flush();
    await expect(rec.deliverBatch(rec.published)).rejects.toThrow("poison");
    // The batch (1, 2, 3 tried) rolled back, then 1 and 2 went through alone and 3 failed alone;
    // 4 waits behind it, as it would behind a failed message of an unbatched consumer.
    expect(await applied()).toEqual(["Event:1", "Event:2"]);
    expect((await inbox()).map((r) => r.event_id).sort()).toEqual(["Event:1", "Event:2"]);
    expect(Object.fromEntries(attempts)).toEqual({ "Event:1": 2, "Event:2": 2, "Event:3": 2 });
  });

  it("hands a batch consumer's fresh events to handleMany together, once each and in order, in the batch's one transaction", async () => {
    const rec = recordingBus();
    const calls: { ids: string[]; trx: unknown }[] = [];
    const alone: string[] = [];
    await subscribeConsumer({
      db: consumer,
      bus: rec.bus,
      service: "svc",
      def: {
        ...consumerDef(async (e, trx) => {
          alone.push(e.eventId);
          await applyEvent(e, trx);
        }),
        relevant: (e: PlatformEvent) => e.platformId !== "Platform:other",
        batch: true,
        async handleMany(events: PlatformEvent[], trx) {
          calls.push({ ids: events.map((e) => e.eventId), trx });
          for (const e of events) await applyEvent(e, trx);
        },
      },
      log,
    });
    for (const n of [1, 2, 3, 4, 5]) await enqueue(producer, event(n, n === 4 ? "Platform:other" : "Platform:1"));
    await createOutboxRelay({ db: producer, bus: rec.bus, log }).flush();
    const [m1, m2, m3, m4, m5] = rec.published as [BusMessage, BusMessage, BusMessage, BusMessage, BusMessage];
    await rec.deliver(m2);
    // One message alone is handled by `handle`.
    expect(alone).toEqual(["Event:2"]);
    expect(calls).toEqual([]);
    await rec.deliverBatch([m3, m1, m2, m3, m4, m5]);
    // The duplicates (2 in the inbox, the second 3 in the batch) and the irrelevant 4 left out.
    expect(calls.map((c) => c.ids)).toEqual([["Event:3", "Event:1", "Event:5"]]);
    expect(alone).toEqual(["Event:2"]);
    expect(await applied()).toEqual(["Event:2", "Event:3", "Event:1", "Event:5"]);
    expect((await inbox()).map((r) => r.event_id).sort()).toEqual(["Event:1", "Event:2", "Event:3", "Event:5"]);
    // Nothing fresh: handleMany is not called.
    await rec.deliverBatch([m1, m2, m3, m4, m5]);
    expect(calls).toHaveLength(1);
  });

  it("when handleMany fails, rolls the batch back and handles its events one by one with handle: the bad one fails alone", async () => {
    const rec = recordingBus();
    const alone = new Map<string, number>();
    let many = 0;
    await subscribeConsumer({
      db: consumer,
      bus: rec.bus,
      service: "svc",
      def: {
        ...consumerDef(async (e, trx) => {
          alone.set(e.eventId, (alone.get(e.eventId) ?? 0) + 1);
          await applyEvent(e, trx);
          if (e.eventId === "Event:3") throw new Error("poison");
        }),
        batch: true,
        async handleMany(events: PlatformEvent[], trx) {
          many++;
          for (const e of events) await applyEvent(e, trx);
          if (events.some((e) => e.eventId === "Event:3")) throw new Error("poison in the batch");
        },
      },
      log,
    });
    for (const n of [1, 2, 3, 4]) await enqueue(producer, event(n));
    await createOutboxRelay({ db: producer, bus: rec.bus, log }).flush();
    await expect(rec.deliverBatch(rec.published)).rejects.toThrow("poison");
    expect(many).toBe(1);
    // The batch's writes and inbox rows rolled back; 1 and 2 went through alone, 3 failed alone
    // and 4 waits behind it.
    expect(await applied()).toEqual(["Event:1", "Event:2"]);
    expect((await inbox()).map((r) => r.event_id).sort()).toEqual(["Event:1", "Event:2"]);
    expect(Object.fromEntries(alone)).toEqual({ "Event:1": 1, "Event:2": 1, "Event:3": 1 });
  });

  it("rolls back a failing handler's effect and inbox row, and commits them once on redelivery", async () => {
    const rec = recordingBus();
    let attempts = 0;
    await subscribeConsumer({
      db: consumer,
      bus: rec.bus,
      service: "svc",
      def: consumerDef(async (e, trx) => {
        attempts++;
        await applyEvent(e, trx);
        if (attempts === 1) throw new Error("handler failed after writing");
      }),
      log,
    });
    await enqueue(producer, event(1));
    await createOutboxRelay({ db: producer, bus: rec.bus, log }).flush();
    const message = rec.published[0]!;
    await expect(rec.deliver(message)).rejects.toThrow("handler failed after writing");
    expect(await applied()).toEqual([]);
    expect(await inbox()).toEqual([]);
    await rec.deliver(message);
    await rec.deliver(message);
    expect(attempts).toBe(2);
    expect(await applied()).toEqual(["Event:1"]);
  });

  it("retries a failing handler through the bus until its effect is committed, exactly once", async () => {
    const bus = createInProcessBus({ log, retryInitialMs: 5, retryMaxMs: 20 });
    const relay = createOutboxRelay({ db: producer, bus, log, pollIntervalMs: 10 });
    let attempts = 0;
    const sub = await subscribeConsumer({
      db: consumer,
      bus,
      service: "svc",
      def: consumerDef(async (e, trx) => {
        attempts++;
        await applyEvent(e, trx);
        if (attempts <= 2) throw new Error("transient failure");
      }),
      log,
    });
    relay.start();
    try {
      await enqueue(producer, event(1));
      relay.nudge();
      await vi.waitFor(async () => expect(await applied()).toEqual(["Event:1"]), { timeout: 10_000, interval: 10 });
      expect(attempts).toBe(3);
    } finally {
      await sub.close();
      await relay.stop();
      await bus.close();
    }
  });

  it("publishes each row once and in order when several relays share one schema", async () => {
    const rec = recordingBus();
    const relays = [1, 2, 3].map(() => createOutboxRelay({ db: producer, bus: rec.bus, log, batchSize: 7 }));
    for (let i = 0; i < 40; i++) await enqueue(producer, event(1000 + i));
    for (let round = 0; round < 100; round++) {
      await Promise.all(relays.map((r) => r.flush()));
      const left = await producer.selectFrom("outbox").select((eb) => eb.fn.countAll<bigint>().as("n")).where("published_at", "is", null).executeTakeFirstOrThrow();
      if (Number(left.n) === 0) break;
    }
    expect(rec.published.map((m) => m.headers["event-id"])).toEqual(Array.from({ length: 40 }, (_, i) => `Event:${1000 + i}`));
  });

  const outboxState = async () =>
    (await producer.selectFrom("outbox").select(["event_id", "published_at", "lease_until", "leased_by"]).orderBy("id").execute()).map((r) => ({
      event: r.event_id,
      published: r.published_at !== null,
      leased: r.lease_until !== null,
    }));

  it("publishes outside any transaction: the lease is committed and the database is usable while the bus publishes", async () => {
    await enqueue(producer, event(1));
    const seenDuringPublish: unknown[] = [];
    const bus: Bus = {
      kind: "in-process",
      // A publish that needs the database, as in-process consumers do. Were the relay holding its
      // transaction, this would deadlock on PGlite's single session and not see the lease on Postgres.
      async publish() {
        seenDuringPublish.push(...(await outboxState()));
      },
      async subscribe() {
        return { close: async () => {} };
      },
      async close() {},
    };
    expect(await createOutboxRelay({ db: producer, bus, log }).flush()).toBe(1);
    expect(seenDuringPublish).toEqual([{ event: "Event:1", published: false, leased: true }]);
    expect(await outboxState()).toEqual([{ event: "Event:1", published: true, leased: false }]);
  });

  it("leaves rows leased by a relay that died mid-publish alone until the lease expires, then publishes them again", async () => {
    await enqueue(producer, event(1));
    const dying = holdingBus();
    void createOutboxRelay({ db: producer, bus: dying.bus, log }).flush().catch(() => {});
    await dying.publishStarted(1);
    const rec = recordingBus();
    const survivor = createOutboxRelay({ db: producer, bus: rec.bus, log });
    expect(await survivor.flush()).toBe(0);
    expect(rec.published).toEqual([]);
    // The dead relay never renews: let its lease run out without waiting on the clock.
    await producer.updateTable("outbox").set({ lease_until: sql`now() - interval '1 second'` }).execute();
    expect(await survivor.flush()).toBe(1);
    expect(rec.published.map((m) => m.headers["event-id"])).toEqual(["Event:1"]);
    expect(await outboxState()).toEqual([{ event: "Event:1", published: true, leased: false }]);
  });

  it("does not publish rows newer than an unpublished row another live relay has leased", async () => {
    for (let n = 1; n <= 3; n++) await enqueue(producer, event(n));
    const first = holdingBus();
    const flushing = createOutboxRelay({ db: producer, bus: first.bus, log, batchSize: 2 }).flush();
    await first.publishStarted(1);
    expect(first.ids(0)).toEqual(["Event:1", "Event:2"]);
    const rec = recordingBus();
    const second = createOutboxRelay({ db: producer, bus: rec.bus, log, batchSize: 2 });
    expect(await second.flush()).toBe(0);
    first.calls[0]!.resolve();
    await first.publishStarted(2);
    first.calls[1]!.resolve();
    expect(await flushing).toBe(3);
    expect(await second.flush()).toBe(0);
    expect(rec.published).toEqual([]);
    expect((await outboxState()).every((r) => r.published)).toBe(true);
  });

  it("gives its lease back when a publish fails, so the next attempt publishes the row at once", async () => {
    await enqueue(producer, event(1));
    const failing = holdingBus();
    const relay = createOutboxRelay({ db: producer, bus: failing.bus, log });
    const flushing = relay.flush();
    await failing.publishStarted(1);
    failing.calls[0]!.reject(new Error("broker unavailable"));
    await expect(flushing).rejects.toThrow("broker unavailable");
    expect(await outboxState()).toEqual([{ event: "Event:1", published: false, leased: false }]);
    const rec = recordingBus();
    expect(await createOutboxRelay({ db: producer, bus: rec.bus, log }).flush()).toBe(1);
  });

  it("stops without waiting for a publish the bus never confirms, leaving the row unpublished and free for the next start", async () => {
    await enqueue(producer, event(1));
    const stuck = holdingBus();
    const relay = createOutboxRelay({ db: producer, bus: stuck.bus, log, stopGraceMs: 0 });
    relay.start();
    await stuck.publishStarted(1);
    await relay.stop();
    expect(await outboxState()).toEqual([{ event: "Event:1", published: false, leased: false }]);
  });

  it("delivers, exactly once per consumer, an event whose consumption a stop interrupted, when relay and bus start again on the same database", async () => {
    // Two consumer groups: "fast" commits the event before the stop, "slow" is stopped midway.
    let fastCalls = 0;
    let blockedCalls = 0;
    const def = (name: string, handle: (e: PlatformEvent, trx: Kysely<any>) => Promise<void>): ConsumerDefinition<typeof PlatformEventSchema> => ({
      name,
      topic: TOPIC,
      schema: PlatformEventSchema,
      eventId: (e) => e.eventId,
      handle,
    });
    const fast = def("fast", async (e, trx) => {
      fastCalls++;
      await trx.insertInto("applied").values({ event_id: `fast ${e.eventId}` }).execute();
    });
    let entered!: () => void;
    const blockedEntered = new Promise<void>((r) => (entered = r));
    let crash!: (err: Error) => void;
    const crashed = new Promise<never>((_, reject) => (crash = reject));
    const slowAfterRestart = def("slow", async (e, trx) => {
      blockedCalls++;
      await trx.insertInto("applied").values({ event_id: `slow ${e.eventId}` }).execute();
    });

    const bus1 = createInProcessBus({ log, retryInitialMs: 5, retryMaxMs: 20 });
    const relay1 = createOutboxRelay({ db: producer, bus: bus1, log, pollIntervalMs: 10, stopGraceMs: 0 });
    await subscribeConsumer({ db: consumer, bus: bus1, service: "svc", def: fast, log });
    // The "slow" group is stopped before it reaches the database (on PGlite, a handler blocked
    // inside its inbox transaction would hold the one session everything else needs).
    await bus1.subscribe({
      group: "svc.slow",
      topics: [TOPIC],
      handle: async () => {
        blockedCalls++;
        entered();
        await crashed;
      },
    });
    relay1.start();
    await enqueue(producer, event(1));
    relay1.nudge();
    await blockedEntered;
    await vi.waitFor(async () => expect(await applied()).toEqual(["fast Event:1"]), { timeout: 10_000, interval: 10 });

    // Stop everything while "slow" is still inside its handler.
    const closing = bus1.close();
    crash(new Error("process stopped"));
    await closing;
    await relay1.stop();
    expect(await outboxState()).toEqual([{ event: "Event:1", published: false, leased: false }]);

    const bus2 = createInProcessBus({ log, retryInitialMs: 5, retryMaxMs: 20 });
    const relay2 = createOutboxRelay({ db: producer, bus: bus2, log, pollIntervalMs: 10 });
    const subs = [
      await subscribeConsumer({ db: consumer, bus: bus2, service: "svc", def: fast, log }),
      await subscribeConsumer({ db: consumer, bus: bus2, service: "svc", def: slowAfterRestart, log }),
    ];
    relay2.start();
    try {
      await vi.waitFor(async () => expect((await outboxState())[0]!.published).toBe(true), { timeout: 10_000, interval: 10 });
      // Published means every group processed it: no waiting needed before checking the effects.
      expect((await applied()).sort()).toEqual(["fast Event:1", "slow Event:1"]);
      expect((await inbox()).map((r) => r.consumer).sort()).toEqual(["svc.fast", "svc.slow"]);
      expect(fastCalls).toBe(1); // redelivered after the restart, deduplicated by the inbox
      expect(blockedCalls).toBe(2);
    } finally {
      for (const s of subs) await s.close();
      await relay2.stop();
      await bus2.close();
    }
  });

  it("publishes an event as soon as its transaction commits: the outbox's notification wakes the relay, with no poll due and no nudge", async () => {
    const { bus, published } = recordingBus();
    const schema = `producer_${schemaSeq}`;
    // A poll an hour away: only the commit notification can make it publish the second event in time.
    const relay = createOutboxRelay({ db: producer, bus, log, pollIntervalMs: 3_600_000, wakeups: (wake) => handle.listen(outboxChannel(schema), wake) });
    await enqueue(producer, event(1));
    relay.start();
    try {
      // The first pass at start publishes Event:1; the relay then sleeps until woken.
      await vi.waitFor(() => expect(published.map((m) => m.headers["event-id"])).toEqual(["Event:1"]), { timeout: 10_000, interval: 10 });
      await enqueue(producer, event(2));
      await vi.waitFor(() => expect(published.map((m) => m.headers["event-id"])).toEqual(["Event:1", "Event:2"]), { timeout: 10_000, interval: 10 });
    } finally {
      await relay.stop();
    }
  });

  const eventIds = (ms: BusMessage[]) => ms.map((m) => m.headers["event-id"]);

  it("spends one statement per pass, marking the previous pass's rows in its lease, and marks the last pass's on stop()", async () => {
    const rec = recordingBus();
    const counter = counting(producer);
    // Neither the safety net nor the deferred mark within the test: each statement is a pass's.
    const relay = createOutboxRelay({ db: counter.db, bus: rec.bus, log, pollIntervalMs: 3_600_000, leaseMs: 3_600_000, markDelayMs: 3_600_000 });
    relay.start();
    try {
      // The pass at start (an empty lease) and the prune after it (once in 10 minutes).
      await vi.waitFor(() => expect(counter.statements()).toBe(2), { timeout: 10_000, interval: 5 });
      const atStart = counter.statements();
      for (let n = 1; n <= 4; n++) {
        await enqueue(producer, event(n));
        relay.nudge();
        await vi.waitFor(() => expect(rec.published).toHaveLength(n), { timeout: 10_000, interval: 5 });
        expect(counter.statements()).toBe(atStart + n);
        // The rows of the pass before are published, this pass's are leased until the next one.
        expect(await outboxState()).toEqual(
          Array.from({ length: n }, (_, i) => ({ event: `Event:${i + 1}`, published: i + 1 < n, leased: i + 1 === n })),
        );
      }
    } finally {
      await relay.stop();
    }
    expect(eventIds(rec.published)).toEqual(["Event:1", "Event:2", "Event:3", "Event:4"]);
    expect((await outboxState()).every((r) => r.published && !r.leased)).toBe(true);
  });

  it("marks the last pass's rows markDelayMs after it with one statement, without any further event", async () => {
    const rec = recordingBus();
    const counter = counting(producer);
    const relay = createOutboxRelay({ db: counter.db, bus: rec.bus, log, pollIntervalMs: 3_600_000, markDelayMs: 20 });
    relay.start();
    try {
      await vi.waitFor(() => expect(counter.statements()).toBeGreaterThanOrEqual(1), { timeout: 10_000, interval: 5 });
      await enqueue(producer, event(1));
      await enqueue(producer, event(2));
      relay.nudge();
      await vi.waitFor(() => expect(rec.published).toHaveLength(2), { timeout: 10_000, interval: 5 });
      await vi.waitFor(async () => expect((await outboxState()).every((r) => r.published && !r.leased)).toBe(true), { timeout: 10_000, interval: 5 });
      // After the last pass (its lease statement), one statement of its own: the deferred mark. Read
      // from the statements' order rather than counted from a moment the test picks, which a
      // loaded machine may place after the 20 ms mark already ran.
      const kinds = counter.kinds();
      expect(kinds.slice(kinds.lastIndexOf("SelectQueryNode") + 1)).toEqual(["UpdateQueryNode"]);
    } finally {
      await relay.stop();
    }
    expect(eventIds(rec.published)).toEqual(["Event:1", "Event:2"]);
  });

  it("after a crash before the mark, publishes again after the lease ran out exactly the rows it had not marked", async () => {
    for (let n = 1; n <= 3; n++) await enqueue(producer, event(n));
    const first = recordingBus();
    // Nothing but a pass marks: no deferred mark, no safety net within the test.
    const crashing = createOutboxRelay({ db: producer, bus: first.bus, log, pollIntervalMs: 3_600_000, leaseMs: 3_600_000, markDelayMs: 3_600_000 });
    crashing.start();
    try {
      await vi.waitFor(() => expect(first.published).toHaveLength(3), { timeout: 10_000, interval: 5 });
      for (let n = 4; n <= 5; n++) await enqueue(producer, event(n));
      crashing.nudge();
      await vi.waitFor(() => expect(first.published).toHaveLength(5), { timeout: 10_000, interval: 5 });
      // The relay is gone from here on (never stopped, never marks again): 1-3 were marked by the
      // pass that leased 4-5, which it published but did not mark.
      expect(await outboxState()).toEqual([
        ...[1, 2, 3].map((n) => ({ event: `Event:${n}`, published: true, leased: false })),
        ...[4, 5].map((n) => ({ event: `Event:${n}`, published: false, leased: true })),
      ]);
      const rec = recordingBus();
      const survivor = createOutboxRelay({ db: producer, bus: rec.bus, log });
      expect(await survivor.flush()).toBe(0);
      await producer.updateTable("outbox").set({ lease_until: sql`now() - interval '1 second'` }).where("published_at", "is", null).execute();
      expect(await survivor.flush()).toBe(2);
      expect(eventIds(rec.published)).toEqual(["Event:4", "Event:5"]);
      expect((await outboxState()).every((r) => r.published && !r.leased)).toBe(true);
    } finally {
      // Its mark on stop touches nothing: the survivor holds 4-5 now.
      await crashing.stop();
    }
    expect(eventIds(first.published)).toEqual(["Event:1", "Event:2", "Event:3", "Event:4", "Event:5"]);
  });

  it("looks again, unwoken, once another relay's rows it stopped short at are marked", async () => {
    for (let n = 1; n <= 2; n++) await enqueue(producer, event(n));
    const first = holdingBus();
    const flushing = createOutboxRelay({ db: producer, bus: first.bus, log }).flush();
    await first.publishStarted(1);
    await enqueue(producer, event(3));
    const rec = recordingBus();
    const counter = counting(producer);
    // No safety net and no notification within the test: only the look again can find Event:3.
    const second = createOutboxRelay({ db: counter.db, bus: rec.bus, log, pollIntervalMs: 3_600_000, markDelayMs: 20 });
    second.start();
    try {
      // Its pass at start stops short at Event:1, which the first relay is publishing.
      await vi.waitFor(() => expect(counter.statements()).toBeGreaterThanOrEqual(1), { timeout: 10_000, interval: 5 });
      expect(rec.published).toEqual([]);
      first.calls[0]!.resolve();
      expect(await flushing).toBe(2);
      await vi.waitFor(() => expect(eventIds(rec.published)).toEqual(["Event:3"]), { timeout: 10_000, interval: 5 });
    } finally {
      await second.stop();
    }
    expect(eventIds(first.calls[0]!.messages)).toEqual(["Event:1", "Event:2"]);
    expect((await outboxState()).every((r) => r.published && !r.leased)).toBe(true);
  });

  it("never publishes a row twice while two relays run side by side, and publishes every row in order (property, many rows)", async () => {
    for (const seed of [1, 2, 3]) {
      const random = seededRandom(seed);
      const rec = recordingBus();
      const relays = [0, 1].map(() =>
        createOutboxRelay({ db: producer, bus: rec.bus, log, batchSize: 1 + Math.floor(random() * 8), pollIntervalMs: 3_600_000, markDelayMs: 1 + Math.floor(random() * 20) }),
      );
      for (const r of relays) r.start();
      const before = rec.published.length;
      const rows = 120;
      try {
        // Four writers, each its own key, commit 1-5 events at a time; each commit wakes one relay or
        // both, as a notification would.
        let next = seed * 10_000;
        const last = next + rows;
        const written = new Map<string, string[]>();
        await Promise.all(
          [0, 1, 2, 3].map(async (w) => {
            const key = `Platform:w${w}`;
            written.set(key, []);
            while (next < last) {
              const n = Math.min(last - next, 1 + Math.floor(random() * 5));
              const ids = Array.from({ length: n }, () => `Event:${next++}`);
              await inTransaction(producer, async (trx) => {
                for (const id of ids) await enqueueEvent(trx, { topic: TOPIC, key, eventId: id, eventType: "TEST", schema: PlatformEventSchema, message: create(PlatformEventSchema, { eventId: id, platformId: key }) });
              });
              written.get(key)!.push(...ids);
              const woken = random();
              if (woken < 0.7) relays[0]!.nudge();
              if (woken > 0.3) relays[1]!.nudge();
            }
          }),
        );
        relays[0]!.nudge();
        relays[1]!.nudge();
        await vi.waitFor(() => expect(rec.published.length - before).toBeGreaterThanOrEqual(rows), { timeout: 30_000, interval: 10 });
        const published = rec.published.slice(before);
        expect(new Set(eventIds(published)).size, `seed ${seed}: a row published twice`).toBe(published.length);
        // Per key, in the order each writer committed: a relay waits for the other's rows to be marked.
        for (const [key, ids] of written) expect(eventIds(published.filter((m) => m.key === key)), `seed ${seed}, ${key}`).toEqual(ids);
      } finally {
        await Promise.all(relays.map((r) => r.stop()));
      }
      expect(eventIds(rec.published.slice(before))).toHaveLength(rows);
      expect((await outboxState()).every((r) => r.published && !r.leased), `seed ${seed}`).toBe(true);
    }
  });

  it("drains what was committed before stop() when the relay stops", async () => {
    const rec = recordingBus();
    const relay = createOutboxRelay({ db: producer, bus: rec.bus, log, pollIntervalMs: 60_000 });
    relay.start();
    await enqueue(producer, event(1));
    await relay.stop();
    expect(rec.published.map((m) => m.headers["event-id"])).toEqual(["Event:1"]);
  });

  it("opens no span for an event its consumer declares irrelevant", async () => {
    const exporter = installTestTracing();
    exporter.reset();
    await deliverIgnoredThenWanted(applyEvent);
    const consumed = exporter.getFinishedSpans().filter((s) => s.name === `${TOPIC} process`);
    expect(consumed.map((s) => s.attributes["messaging.message.id"])).toEqual(["Event:2"]);
  });

  it("runs the consumer in a CONSUMER span that continues the producer's trace", async () => {
    const exporter = installTestTracing();
    exporter.reset();
    const rec = recordingBus();
    await subscribeConsumer({ db: consumer, bus: rec.bus, service: "svc", def: consumerDef(applyEvent), log });
    let producerSpan: { traceId: string; spanId: string } | undefined;
    await trace.getTracer("test").startActiveSpan("producer", async (span) => {
      producerSpan = span.spanContext();
      await enqueue(producer, event(1));
      span.end();
    });
    await createOutboxRelay({ db: producer, bus: rec.bus, log }).flush();
    expect(rec.published[0]!.headers.traceparent).toContain(producerSpan!.traceId);
    await rec.deliver(rec.published[0]!);
    const consumed = exporter.getFinishedSpans().find((s) => s.name === `${TOPIC} process`);
    expect(consumed?.kind).toBe(4 /* SpanKind.CONSUMER */);
    expect(consumed?.spanContext().traceId).toBe(producerSpan!.traceId);
    expect(consumed?.parentSpanContext?.spanId).toBe(producerSpan!.spanId);
  });

  it("handles events together (handleMany) in one CONSUMER span under the first producer's trace, linked to the others' producers", async () => {
    const exporter = installTestTracing();
    exporter.reset();
    const rec = recordingBus();
    await subscribeConsumer({
      db: consumer,
      bus: rec.bus,
      service: "svc",
      def: {
        ...consumerDef(applyEvent),
        batch: true,
        async handleMany(events: PlatformEvent[], trx) {
          for (const e of events) await applyEvent(e, trx);
        },
      },
      log,
    });
    const producers: { traceId: string; spanId: string }[] = [];
    for (const n of [1, 2, 3]) {
      await trace.getTracer("test").startActiveSpan(`producer ${n}`, async (span) => {
        producers.push(span.spanContext());
        await enqueue(producer, event(n));
        span.end();
      });
    }
    await createOutboxRelay({ db: producer, bus: rec.bus, log }).flush();
    await rec.deliverBatch(rec.published);
    const consumed = exporter.getFinishedSpans().filter((s) => s.name === `${TOPIC} process`);
    expect(consumed).toHaveLength(1);
    expect(consumed[0]!.spanContext().traceId).toBe(producers[0]!.traceId);
    expect(consumed[0]!.attributes["corridor.inbox.handled_together"]).toBe(3);
    expect(consumed[0]!.links.map((l) => [l.context.traceId, l.context.spanId, l.attributes?.["messaging.message.id"]])).toEqual([
      [producers[1]!.traceId, producers[1]!.spanId, "Event:2"],
      [producers[2]!.traceId, producers[2]!.spanId, "Event:3"],
    ]);
  });
});
