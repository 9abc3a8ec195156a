import { create, toBinary, type MessageShape } from "@bufbuild/protobuf";
import { PlatformEventSchema } from "@corridor/proto/corridor/auth_sessions/v1/events_pb.js";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createBus, createInProcessBus } from "../src/bus/index.js";
import type { Bus, BusMessage, SubscribeOptions } from "../src/bus/types.js";
import { migrateSchema, type DatabaseHandle, type Kysely } from "../src/db/index.js";
import { createLogger } from "../src/log.js";
import { subscribeConsumer, subscribeService } from "../src/outbox/index.js";
import type { ConsumerDefinition } from "../src/service.js";
import { databaseKinds, openTestDatabase } from "./db-fixture.js";

// One consumer group per service (issue 28): a service's consumers share one subscription, each
// keeps its inbox, and the group's first start on Kafka takes over from the per-consumer groups
// of before without losing or doubling an event.
const log = createLogger("consumer-groups-test", "silent");
const TOPIC = "corridor.test.v1";
const OTHER = "corridor.other.v1";
const NO_MIGRATIONS = "/nonexistent/kit-test-migrations";
const brokers = process.env.KAFKA_BROKERS?.split(",").filter(Boolean) ?? [];

type PlatformEvent = MessageShape<typeof PlatformEventSchema>;
const message = (n: number, topic = TOPIC): BusMessage => {
  const e = create(PlatformEventSchema, { eventId: `Event:${n}`, platformId: `Platform:${n % 7}` });
  return { topic, key: e.platformId, value: toBinary(PlatformEventSchema, e), headers: { "event-id": e.eventId } };
};
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** A bus that records what is subscribed and lets the test deliver. */
function recordingBus() {
  const subs: SubscribeOptions[] = [];
  const bus: Bus = {
    kind: "in-process",
    async publish() {},
    async subscribe(opts) {
      subs.push(opts);
      return { close: async () => {} };
    },
    async close() {},
  };
  return { bus, subs };
}

/** Wraps a bus so every message handed to the subscriptions made through it is recorded (event ids). */
function spyingBus(bus: Bus, seen: string[]): Bus {
  return {
    kind: bus.kind,
    publish: (m) => bus.publish(m),
    close: () => bus.close(),
    subscribe: (o) =>
      bus.subscribe({
        ...o,
        handle: (m) => {
          seen.push(m.headers["event-id"]!);
          return o.handle(m);
        },
        ...(o.handleBatch
          ? {
              handleBatch: (ms: BusMessage[]) => {
                seen.push(...ms.map((m) => m.headers["event-id"]!));
                return o.handleBatch!(ms);
              },
            }
          : {}),
      }),
  };
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.each(databaseKinds)("one consumer group per service on $kind", ({ kind, skip }) => {
  let handle: DatabaseHandle;
  let dispose: () => Promise<void>;
  let db: Kysely<any>;
  let seq = 0;

  beforeAll(async () => {
    if (skip) return;
    ({ handle, dispose } = await openTestDatabase(kind));
  });
  afterAll(async () => {
    await dispose?.();
  });
  beforeEach(async (ctx) => {
    if (skip) return ctx.skip();
    seq++;
    await migrateSchema(handle, `groups_${seq}`, NO_MIGRATIONS);
    db = handle.forSchema(`groups_${seq}`);
    await db.schema
      .createTable("effects")
      .addColumn("n", "integer", (c) => c.generatedAlwaysAsIdentity())
      .addColumn("consumer", "text", (c) => c.notNull())
      .addColumn("event_id", "text", (c) => c.notNull())
      .execute();
  });

  /** A consumer recording each event it handles; `fails` makes it throw for the ids it holds. */
  function consumer(
    name: string,
    opts: { topic?: string | string[]; formerTopics?: string[]; batch?: boolean; idempotent?: boolean; fails?: Set<string>; relevant?: (e: PlatformEvent) => boolean } = {},
  ): ConsumerDefinition<typeof PlatformEventSchema> {
    return {
      name,
      topic: opts.topic ?? TOPIC,
      formerTopics: opts.formerTopics,
      schema: PlatformEventSchema,
      batch: opts.batch,
      idempotent: opts.idempotent,
      eventId: (e) => e.eventId,
      relevant: opts.relevant,
      async handle(e, trx) {
        if (opts.fails?.has(e.eventId)) throw new Error(`${name} refuses ${e.eventId}`);
        // An idempotent consumer recognises a repeat itself (it writes no inbox row).
        if (opts.idempotent && (await trx.selectFrom("effects").select("n").where("consumer", "=", name).where("event_id", "=", e.eventId).executeTakeFirst())) return;
        await trx.insertInto("effects").values({ consumer: name, event_id: e.eventId }).execute();
      },
    };
  }
  /** consumer → event ids it applied, in order. */
  const effects = async () => {
    const rows = await db.selectFrom("effects").select(["consumer", "event_id"]).orderBy("n").execute();
    const out: Record<string, string[]> = {};
    for (const r of rows) (out[r.consumer] ??= []).push(r.event_id);
    return out;
  };
  const ids = (ns: number[]) => ns.map((n) => `Event:${n}`);

  it("subscribes once, as the service's group over the topics of its consumers, naming their former groups", async () => {
    const rec = recordingBus();
    await subscribeService({ db, bus: rec.bus, service: "svc", log, consumers: [consumer("a"), consumer("b", { batch: true }), consumer("c", { topic: OTHER })] });
    expect(rec.subs).toHaveLength(1);
    const sub = rec.subs[0]!;
    expect(sub.group).toBe("svc");
    expect(sub.topics.sort()).toEqual([OTHER, TOPIC].sort());
    expect(sub.batchTopics).toEqual([TOPIC]);
    expect(sub.formerGroups).toEqual([
      { group: "svc.a", topics: [TOPIC] },
      { group: "svc.b", topics: [TOPIC] },
      { group: "svc.c", topics: [OTHER] },
    ]);
  });

  it("hands a message to every consumer of its topic once, each with its own inbox name, and recognises what the per-consumer groups had handled", async () => {
    // Before the change: svc.a handled Event:1 under its own group.
    const old = recordingBus();
    await subscribeConsumer({ db, bus: old.bus, service: "svc", log, def: consumer("a") });
    expect(old.subs[0]!.group).toBe("svc.a");
    await old.subs[0]!.handle(message(1));

    const rec = recordingBus();
    await subscribeService({
      db,
      bus: rec.bus,
      service: "svc",
      log,
      consumers: [consumer("a"), consumer("b", { batch: true }), consumer("c", { batch: true, relevant: (e) => e.platformId !== "Platform:2" }), consumer("d", { topic: OTHER })],
    });
    const sub = rec.subs[0]!;
    await sub.handle(message(1));
    await sub.handleBatch!([message(2), message(3)]);
    await sub.handle(message(4, OTHER));
    // Redeliveries change nothing.
    await sub.handleBatch!([message(1), message(2), message(3)]);
    await sub.handle(message(4, OTHER));

    expect(await effects()).toEqual({ a: ids([1, 2, 3]), b: ids([1, 2, 3]), c: ids([1, 3]), d: ids([4]) });
    const inbox = await db.selectFrom("inbox").select(["consumer", "event_id"]).orderBy("consumer").orderBy("event_id").execute();
    expect(inbox.map((r) => `${r.consumer} ${r.event_id}`)).toEqual([
      "svc.a Event:1",
      "svc.a Event:2",
      "svc.a Event:3",
      "svc.b Event:1",
      "svc.b Event:2",
      "svc.b Event:3",
      "svc.c Event:1",
      "svc.c Event:3",
      "svc.d Event:4",
    ]);
  });

  it("fails a delivery while one consumer refuses it, without doubling what the others did, and completes it once that consumer accepts", async () => {
    const refused = new Set(["Event:2"]);
    const rec = recordingBus();
    await subscribeService({ db, bus: rec.bus, service: "svc", log, consumers: [consumer("a"), consumer("b", { batch: true }), consumer("c", { batch: true, fails: refused })] });
    const sub = rec.subs[0]!;
    await expect(sub.handleBatch!([message(1), message(2), message(3)])).rejects.toThrow(/c refuses Event:2/);
    refused.clear();
    await sub.handleBatch!([message(1), message(2), message(3)]);
    const got = await effects();
    for (const name of ["a", "b", "c"]) expect(got[name]!.slice().sort()).toEqual(ids([1, 2, 3]));
  });

  it("on the in-process bus: one group for the service, every consumer gets every event once, publish waits for all of them", async () => {
    const bus = createInProcessBus({ log, retryInitialMs: 5, retryMaxMs: 20 });
    const flaky = new Set(["Event:3"]);
    await subscribeService({ db, bus, service: "svc", log, consumers: [consumer("a"), consumer("b", { batch: true, fails: flaky }), consumer("c", { topic: OTHER })] });
    const published = bus.publish([...range(1, 5).map((n) => message(n)), message(6, OTHER)]);
    // b's refusal holds Event:3 for b alone: a handles everything meanwhile.
    await until("a to handle 1..5 and b all but Event:3", async () => {
      const e = await effects();
      return e.a?.length === 5 && e.b?.length === 4;
    });
    expect((await effects()).b).not.toContain("Event:3");
    flaky.clear();
    await published;
    const got = await effects();
    expect(got.a!.slice().sort()).toEqual(ids(range(1, 5)).sort());
    expect(got.b!.slice().sort()).toEqual(ids(range(1, 5)).sort());
    expect(got.c).toEqual(ids([6]));
    await bus.close();
  });

  it("reads a consumer's topics and its former topics, in one subscription, and names the former topics as its former group's", async () => {
    const NEW_A = "corridor.test.a.v1";
    const NEW_B = "corridor.test.b.v1";
    const rec = recordingBus();
    await subscribeService({ db, bus: rec.bus, service: "svc", log, consumers: [consumer("a", { topic: [NEW_A, NEW_B], formerTopics: [TOPIC], batch: true }), consumer("c", { topic: OTHER })] });
    const sub = rec.subs[0]!;
    expect(sub.topics.sort()).toEqual([NEW_A, NEW_B, OTHER, TOPIC].sort());
    expect(sub.formerGroups).toEqual([
      { group: "svc.a", topics: [TOPIC] },
      { group: "svc.c", topics: [OTHER] },
    ]);
    // What an older producer wrote on the former topic, and the same event seen again on a new one
    // (a row republished after the upgrade cannot be, but a replay must still be recognised).
    await sub.handleBatch!([message(1), message(2)]);
    await sub.handleBatch!([message(3, NEW_A), message(1, NEW_A)]);
    await sub.handle(message(4, NEW_B));
    await sub.handle(message(5, OTHER));
    expect(await effects()).toEqual({ a: ids([1, 2, 3, 4]), c: ids([5]) });
  });

  it("writes no inbox row for an idempotent consumer, alone or batched with others, and its handler recognises repeats", async () => {
    const rec = recordingBus();
    await subscribeService({ db, bus: rec.bus, service: "svc", log, consumers: [consumer("i", { batch: true, idempotent: true }), consumer("b", { batch: true }), consumer("j", { topic: OTHER, idempotent: true })] });
    const sub = rec.subs[0]!;
    await sub.handleBatch!([message(1), message(2), message(1)]);
    await sub.handleBatch!([message(2), message(3)]);
    await sub.handle(message(4, OTHER));
    await sub.handle(message(4, OTHER));
    expect(await effects()).toEqual({ i: ids([1, 2, 3]), b: ids([1, 2, 3]), j: ids([4]) });
    const inbox = await db.selectFrom("inbox").select(["consumer"]).distinct().execute();
    expect(inbox.map((r) => r.consumer)).toEqual(["svc.b"]);
  });

  it("asks admit once per delivery, outside any transaction and given the service's database, and handles only the events it admits; a throwing admit admits all", async () => {
    const rec = recordingBus();
    const asked: string[][] = [];
    const given: unknown[] = [];
    let failAdmit = false;
    const gated: ConsumerDefinition<typeof PlatformEventSchema> = {
      ...consumer("g", { batch: true, idempotent: true }),
      async admit(events, database) {
        asked.push(events.map((e) => e.eventId));
        given.push(database);
        if (failAdmit) throw new Error("cannot tell");
        return events.map((e) => e.eventId !== "Event:2");
      },
    };
    await subscribeService({ db, bus: rec.bus, service: "svc", log, consumers: [gated, consumer("b", { batch: true })] });
    const sub = rec.subs[0]!;
    let transactions = 0;
    const counting = new Proxy(db, { get: (t, k) => (k === "transaction" ? (transactions++, t.transaction.bind(t)) : Reflect.get(t, k)) });
    const rec2 = recordingBus();
    await subscribeService({ db: counting, bus: rec2.bus, service: "svc2", log, consumers: [{ ...gated, name: "g2" }] });
    await sub.handleBatch!([message(1), message(2), message(3)]);
    expect(asked).toEqual([ids([1, 2, 3])]);
    // Only refused events: no transaction at all.
    await rec2.subs[0]!.handleBatch!([message(2), message(2)]);
    expect(transactions).toBe(0);
    failAdmit = true;
    await sub.handle(message(2));
    expect(await effects()).toEqual({ g: ids([1, 3, 2]), b: ids([1, 2, 3]) });
    // The database each subscription was given, not a transaction (what admit writes commits by itself).
    expect(given.length).toBe(3);
    expect([given[0] === db, given[1] === counting, given[2] === db]).toEqual([true, true, true]);
  });

  it("on the in-process bus: a consumer of several topics gets each one's events, and a publish on a topic nobody reads resolves", async () => {
    const bus = createInProcessBus({ log, retryInitialMs: 5, retryMaxMs: 20 });
    await subscribeService({ db, bus, service: "svc", log, consumers: [consumer("a", { topic: [TOPIC, OTHER], formerTopics: ["corridor.old.v1"], batch: true, idempotent: true })] });
    await bus.publish([message(1), message(2, OTHER), message(3, "corridor.old.v1"), message(4, "corridor.nobody.v1")]);
    expect((await effects()).a!.slice().sort()).toEqual(ids([1, 2, 3]));
    await bus.close();
  });

  it.skipIf(brokers.length === 0)(
    "on Kafka: upgrading from per-consumer groups to the service's group, two replicas starting together while an old one still runs, loses and doubles nothing, and starts at the least offset the old groups committed",
    async () => {
      const prefix = `g${randomBytes(4).toString("hex")}.`;
      const makeBus = () => createBus({ kafkaBrokers: brokers, clientId: "consumer-groups-test", topicPrefix: prefix, log, numPartitions: 3 });
      const a = consumer("a");
      const b = consumer("b", { batch: true });

      // The old deployment: svc.a and svc.b, a group each.
      const oldBus = await makeBus();
      const oldA = await subscribeConsumer({ db, bus: oldBus, service: "svc", log, def: a });
      const oldB = await subscribeConsumer({ db, bus: oldBus, service: "svc", log, def: b });
      await oldBus.publish(range(1, 20).map((n) => message(n)));
      await until("old groups to handle 1..20", async () => {
        const e = await effects();
        return e.a?.length === 20 && e.b?.length === 20;
      });
      // svc.b stops (its committed offsets cover 1..20); svc.a carries on through 21..40.
      await oldB.close();
      await oldBus.publish(range(21, 40).map((n) => message(n)));
      await until("svc.a to handle 21..40", async () => (await effects()).a?.length === 40);

      // The new deployment: two replicas of the service start together, while svc.a still runs.
      const seen: string[] = [];
      const newBuses = [spyingBus(await makeBus(), seen), spyingBus(await makeBus(), seen)];
      const subs = await Promise.all(newBuses.map((bus) => subscribeService({ db, bus, service: "svc", log, consumers: [a, b] })));
      await oldBus.publish(range(41, 50).map((n) => message(n)));
      await oldA.close();
      await oldBus.close();
      await newBuses[0]!.publish(range(51, 60).map((n) => message(n)));

      await until("every consumer to have every event", async () => {
        const e = await effects();
        return (e.a?.length ?? 0) >= 60 && (e.b?.length ?? 0) >= 60;
      });
      // Let anything late (a redelivery after the replicas' rebalance) arrive before counting.
      await new Promise((r) => setTimeout(r, 2_000));
      const got = await effects();
      expect(got.a!.slice().sort()).toEqual(ids(range(1, 60)).sort());
      expect(got.b!.slice().sort()).toEqual(ids(range(1, 60)).sort());
      // Seeded at the least committed offset (svc.b's): what both old groups had processed was not
      // fetched again; what only svc.a had was, and its inbox recognised it.
      expect(seen.filter((id) => ids(range(1, 20)).includes(id))).toEqual([]);
      for (const id of ids(range(21, 60))) expect(seen).toContain(id);

      for (const s of subs) await s.close();
      for (const bus of newBuses) await bus.close();
    },
    240_000,
  );
});
