import { randomBytes } from "node:crypto";
import { KafkaJSNonRetriableError } from "kafkajs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createBus, createInProcessBus } from "../src/bus/index.js";
import { isBrokerAvailability } from "../src/bus/kafka.js";
import type { Bus, BusMessage } from "../src/bus/types.js";
import { createLogger } from "../src/log.js";
import { busContract } from "./bus-contract.js";

const log = createLogger("bus-test", "silent");

// The in-process bus retries fast here so the redelivery test does not wait long.
busContract("in-process", async () => createInProcessBus({ log, retryInitialMs: 5, retryMaxMs: 20 }), { durableAt: "consumers" });

// Kafka runs whenever a broker is known (test/infra/global-setup.ts starts one when it can). Each
// file gets its own topic prefix so runs sharing a broker never see each other's messages.
const brokers = process.env.KAFKA_BROKERS?.split(",").filter(Boolean) ?? [];
busContract(
  "kafka",
  () => createBus({ kafkaBrokers: brokers, clientId: "bus-contract", topicPrefix: `t${randomBytes(4).toString("hex")}.`, log }),
  { skip: brokers.length === 0 ? "KAFKA_BROKERS is not set" : undefined, durableAt: "broker" },
);

describe("in-process bus durability", () => {
  const msg = (topic: string, body: string): BusMessage => ({ topic, key: "k", value: new TextEncoder().encode(body), headers: {} });
  let bus: Bus;
  beforeEach(() => {
    bus = createInProcessBus({ log, retryInitialMs: 1, retryMaxMs: 2 });
  });
  afterEach(async () => {
    await bus.close();
  });

  it("keeps a publish waiting while a handler keeps failing, and rejects it when the bus closes", async () => {
    let attempts = 0;
    let failedTwice!: () => void;
    const twice = new Promise<void>((r) => (failedTwice = r));
    await bus.subscribe({
      group: "poisoned",
      topics: ["t"],
      handle: async () => {
        if (++attempts === 2) failedTwice();
        throw new Error("poison");
      },
    });
    const publishing = bus.publish([msg("t", "bad")]);
    await twice;
    await bus.close();
    await expect(publishing).rejects.toThrow(/bus closed before the message was processed/);
  });

  it("keeps a publish waiting while its group has no live member, and resolves it once a member returns", async () => {
    const sub = await bus.subscribe({ group: "g", topics: ["t"], handle: async () => {} });
    await sub.close();
    let resolved = false;
    const publishing = bus.publish([msg("t", "one")]).then(() => (resolved = true));
    await new Promise((r) => setImmediate(r));
    expect(resolved).toBe(false);
    const seen: string[] = [];
    await bus.subscribe({ group: "g", topics: ["t"], handle: async (m) => void seen.push(new TextDecoder().decode(m.value)) });
    await publishing;
    expect(seen).toEqual(["one"]);
  });

  it("resolves a publish with no subscribed group at once, and still delivers the message to a group that subscribes later", async () => {
    await bus.publish([msg("t", "early")]);
    let got!: (body: string) => void;
    const received = new Promise<string>((r) => (got = r));
    await bus.subscribe({ group: "late", topics: ["t"], handle: async (m) => got(new TextDecoder().decode(m.value)) });
    expect(await received).toBe("early");
  });

  it("rejects a publish made after close", async () => {
    await bus.close();
    await expect(bus.publish([msg("t", "x")])).rejects.toThrow(/closed/);
  });
});

describe("in-process bus batches", () => {
  const text = (m: BusMessage) => new TextDecoder().decode(m.value);
  const msg = (topic: string, key: string, body: string): BusMessage => ({ topic, key, value: new TextEncoder().encode(body), headers: {} });
  let bus: Bus;
  beforeEach(() => {
    bus = createInProcessBus({ log, retryInitialMs: 1, retryMaxMs: 2, maxBatch: 4 });
  });
  afterEach(async () => {
    await bus.close();
  });

  it("hands a batch topic's messages published together to one handleBatch call, each key in order, up to maxBatch; other topics and a lone message to handle", async () => {
    const calls: string[][] = [];
    const single: string[] = [];
    await bus.subscribe({
      group: "g",
      topics: ["batched", "plain"],
      handle: async (m) => void single.push(`${m.topic}:${m.key}:${text(m)}`),
      handleBatch: async (ms) => void calls.push(ms.map((m) => `${m.key}:${text(m)}`)),
      batchTopics: ["batched"],
    });
    await bus.publish([
      msg("batched", "a", "1"),
      msg("batched", "b", "1"),
      msg("plain", "a", "1"),
      msg("batched", "a", "2"),
      msg("plain", "b", "1"),
      msg("batched", "c", "1"),
      msg("batched", "b", "2"),
    ]);
    // The first call takes key a's two messages, then b's, up to 4; c's, left alone, goes to handle.
    expect(calls).toEqual([["a:1", "a:2", "b:1", "b:2"]]);
    expect(single.sort()).toEqual(["batched:c:1", "plain:a:1", "plain:b:1"]);
  });

  it("delivers a failed batch again key by key, so a message that keeps failing holds only its own key", async () => {
    const batches: string[][] = [];
    const handled: string[] = [];
    let poisonAttempts = 0;
    const handle = async (m: BusMessage) => {
      if (text(m) === "poison") {
        poisonAttempts++;
        throw new Error("poison");
      }
      handled.push(`${m.key}:${text(m)}`);
    };
    await bus.subscribe({
      group: "g",
      topics: ["t"],
      handle,
      handleBatch: async (ms) => {
        batches.push(ms.map((m) => `${m.key}:${text(m)}`));
        for (const m of ms) await handle(m);
      },
    });
    const good = bus.publish([msg("t", "a", "1"), msg("t", "b", "1")]);
    const bad = bus.publish([msg("t", "p", "poison"), msg("t", "p", "after")]);
    let badSettled = false;
    void bad.then(
      () => (badSettled = true),
      () => (badSettled = true),
    );
    // The good keys' publish resolves although the key they were batched with never goes through.
    await good;
    expect(handled).toContain("a:1");
    expect(handled).toContain("b:1");
    await expect.poll(() => poisonAttempts).toBeGreaterThan(3);
    // Its key stays held: the message after the poison one is never handled, its publish waits.
    expect(handled).not.toContain("p:after");
    expect(badSettled).toBe(false);
    // Only the first delivery was a batch; the key was retried on its own.
    expect(batches).toHaveLength(1);
  });
});

describe.skipIf(brokers.length === 0)("kafka bus: a consumer kafkajs gives up on", () => {
  it("is reported through onConsumerStopped instead of going quiet", async () => {
    const stopped: string[] = [];
    const bus = await createBus({
      kafkaBrokers: brokers,
      clientId: "bus-crash",
      topicPrefix: `t${randomBytes(4).toString("hex")}.`,
      log,
      onConsumerStopped: (group) => stopped.push(group),
    });
    try {
      await bus.subscribe({
        group: "doomed",
        topics: ["crash"],
        // kafkajs restarts a consumer after retriable failures (a handler that throws is one); an
        // error it marks non-retriable ends the consumer for good, as a failed authorization would.
        handle: async () => {
          throw new KafkaJSNonRetriableError("not retriable");
        },
      });
      await bus.publish([{ topic: "crash", key: "k", value: new TextEncoder().encode("x"), headers: {} }]);
      await expect.poll(() => stopped, { timeout: 20_000, interval: 100 }).toEqual(["doomed"]);
    } finally {
      await bus.close();
    }
  });
});

describe.skipIf(brokers.length === 0)("kafka bus: a consumer kafkajs gives up on while the broker is away", () => {
  it("is replaced in this process and goes on from where it was, without stopping the subscription", async () => {
    const stopped: string[] = [];
    const bus = await createBus({
      kafkaBrokers: brokers,
      clientId: "bus-away",
      topicPrefix: `t${randomBytes(4).toString("hex")}.`,
      log,
      onConsumerStopped: (group) => stopped.push(group),
    });
    try {
      const handled: string[] = [];
      let failures = 0;
      await bus.subscribe({
        group: "patient",
        topics: ["away"],
        // What kafkajs throws, non-retriable, when a restarted broker has no coordinator for the
        // group yet: the member is given up, and the bus starts another.
        handle: async (m) => {
          if (failures++ === 0) throw new KafkaJSNonRetriableError("Failed to find group coordinator");
          handled.push(new TextDecoder().decode(m.value));
        },
      });
      await bus.publish([{ topic: "away", key: "k", value: new TextEncoder().encode("after the outage"), headers: {} }]);
      await expect.poll(() => handled, { timeout: 30_000, interval: 100 }).toEqual(["after the outage"]);
      expect(failures).toBe(2);
      expect(stopped).toEqual([]);
    } finally {
      await bus.close();
    }
  });
});

describe("isBrokerAvailability", () => {
  it("tells a broker that is away or settling from a refusal that a restart cannot mend", () => {
    expect(isBrokerAvailability(new KafkaJSNonRetriableError("Failed to find group coordinator"))).toBe(true);
    const exceeded = Object.assign(new Error("Connection error: connect ECONNREFUSED 127.0.0.1:9"), { name: "KafkaJSNumberOfRetriesExceeded", retriable: false });
    expect(isBrokerAvailability(exceeded)).toBe(true);
    expect(isBrokerAvailability(Object.assign(new Error("wrapped"), { cause: Object.assign(new Error("x"), { name: "KafkaJSConnectionClosedError" }) }))).toBe(true);
    expect(isBrokerAvailability(new KafkaJSNonRetriableError("not retriable"))).toBe(false);
    expect(isBrokerAvailability(Object.assign(new Error("Not authorized to access group"), { type: "GROUP_AUTHORIZATION_FAILED" }))).toBe(false);
    expect(isBrokerAvailability(undefined)).toBe(false);
  });
});

describe.skipIf(brokers.length === 0)("kafka bus: batches and offsets", () => {
  const msg = (body: string): BusMessage => ({ topic: "batched", key: "k", value: new TextEncoder().encode(body), headers: {} });
  const text = (m: BusMessage) => new TextDecoder().decode(m.value);

  it("hands messages that arrive together to handleBatch in order, and a member taking over after a close gets none of them again", async () => {
    const bus = await createBus({ kafkaBrokers: brokers, clientId: "bus-batch", topicPrefix: `t${randomBytes(4).toString("hex")}.`, log });
    try {
      const calls: string[][] = [];
      const single: string[] = [];
      const first = await bus.subscribe({
        group: "batcher",
        topics: ["batched"],
        handle: async (m) => void single.push(text(m)),
        handleBatch: async (ms) => void calls.push(ms.map(text)),
      });
      const bodies = ["1", "2", "3", "4", "5"];
      await bus.publish(bodies.map(msg));
      await expect.poll(() => [...calls.flat(), ...single].length, { timeout: 20_000, interval: 50 }).toBe(5);
      // Published in one request, fetched in one batch: one call, not five.
      expect(calls).toEqual([bodies]);
      expect(single).toEqual([]);
      // Closing commits what was processed (the periodic commit has not come due yet).
      await first.close();
      const after: string[] = [];
      await bus.subscribe({ group: "batcher", topics: ["batched"], handle: async (m) => void after.push(text(m)) });
      await bus.publish([msg("end")]);
      await expect.poll(() => after, { timeout: 20_000, interval: 50 }).toEqual(["end"]);
    } finally {
      await bus.close();
    }
  });
});
