import { randomBytes } from "node:crypto";
import { Kafka, logLevel } from "kafkajs";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createBus, DEFAULT_TOPIC_PARTITIONS, kafkaTopicPartitionsSetting } from "../src/bus/index.js";
import type { Bus, BusMessage } from "../src/bus/types.js";
import { createLogger } from "../src/log.js";

// Partitioned topics (issue 28): the count a bus creates topics with, what it does with an
// existing topic that has fewer, and that two members of one group share the partitions while
// every key keeps its order.
const brokers = process.env.KAFKA_BROKERS?.split(",").filter(Boolean) ?? [];

describe("KAFKA_TOPIC_PARTITIONS", () => {
  it("defaults to 12 in its one schema entry, and the bus falls back to that", () => {
    expect(kafkaTopicPartitionsSetting.parse(undefined)).toBe(12);
    expect(DEFAULT_TOPIC_PARTITIONS).toBe(12);
    expect(kafkaTopicPartitionsSetting.parse("3")).toBe(3);
    expect(() => kafkaTopicPartitionsSetting.parse("0")).toThrow();
  });
});

describe.skipIf(brokers.length === 0)("kafka bus: partitions", () => {
  const kafka = new Kafka({ clientId: "partitions-test", brokers, logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  beforeAll(() => admin.connect());
  afterAll(() => admin.disconnect());

  const partitionsOf = async (topic: string) => (await admin.fetchTopicMetadata({ topics: [topic] })).topics[0]!.partitions.length;
  const msg = (topic: string, key: string, body: string): BusMessage => ({ topic, key, value: new TextEncoder().encode(body), headers: {} });
  const text = (m: BusMessage) => new TextDecoder().decode(m.value);

  /** A bus whose warnings are kept, to see what it says about a topic. */
  function busWith(prefix: string, opts: { numPartitions?: number; growPartitions?: boolean }) {
    const warnings: string[] = [];
    const log = createLogger("partitions-test", "warn", { write: (line: string) => void warnings.push(String(JSON.parse(line).msg ?? "")) });
    return { warnings, bus: createBus({ kafkaBrokers: brokers, clientId: "partitions-test", topicPrefix: prefix, log, ...opts }) };
  }

  it("creates topics with the configured count; a topic with fewer is reported (with how to grow it), and grown only when allowed", async () => {
    const prefix = `p${randomBytes(4).toString("hex")}.`;
    const one = busWith(prefix, { numPartitions: 2 });
    const small = await one.bus;
    await small.publish([msg("grow", "k", "a")]);
    expect(await partitionsOf(`${prefix}grow`)).toBe(2);
    await small.close();

    const warned = busWith(prefix, { numPartitions: 4 });
    const b2 = await warned.bus;
    await b2.publish([msg("grow", "k", "b")]);
    await b2.close();
    expect(await partitionsOf(`${prefix}grow`)).toBe(2);
    expect(warned.warnings.join("\n")).toMatch(/has 2 partition\(s\), fewer than KAFKA_TOPIC_PARTITIONS=4.*--partitions 4/);

    const grower = busWith(prefix, { numPartitions: 4, growPartitions: true });
    const b3 = await grower.bus;
    await b3.publish([msg("grow", "k", "c")]);
    await b3.close();
    // The controller has grown it when createPartitions answers; the broker's metadata follows a
    // moment later (a CI run once read 2 right after).
    await vi.waitFor(async () => expect(await partitionsOf(`${prefix}grow`)).toBe(4), { timeout: 15_000, interval: 100 });

    // More than configured is left alone, silently.
    const fewer = busWith(prefix, { numPartitions: 1 });
    const b4 = await fewer.bus;
    await b4.publish([msg("grow", "k", "d")]);
    await b4.close();
    expect(await partitionsOf(`${prefix}grow`)).toBe(4);
    expect(fewer.warnings.filter((w) => w.includes("partition"))).toEqual([]);
  });

  it("two members of one group share the partitions, and each key's messages arrive in order", async () => {
    const prefix = `p${randomBytes(4).toString("hex")}.`;
    const buses: Bus[] = [];
    try {
      for (let i = 0; i < 2; i++) buses.push(await busWith(prefix, { numPartitions: 4 }).bus);
      const seen: { member: number; key: string; n: number }[] = [];
      for (const [member, bus] of buses.entries()) {
        await bus.subscribe({
          group: "sharers",
          topics: ["shared"],
          handle: async (m) => {
            const [key, n] = text(m).split("|");
            seen.push({ member, key: key!, n: Number(n) });
          },
        });
      }
      // Wait until both members hold partitions: the second join rebalances the group.
      const keys = Array.from({ length: 16 }, (_, i) => `Transaction:${i}`);
      const perKey = 20;
      const batch: BusMessage[] = [];
      for (let n = 0; n < perKey; n++) for (const k of keys) batch.push(msg("shared", k, `${k}|${n}`));
      await buses[0]!.publish(batch);
      await expect.poll(() => seen.length, { timeout: 30_000, interval: 100 }).toBeGreaterThanOrEqual(keys.length * perKey);
      for (const k of keys) {
        const ns = seen.filter((s) => s.key === k).map((s) => s.n);
        // At-least-once: a rebalance may deliver a tail again, but never out of order before it.
        const firstPass = ns.slice(0, perKey);
        expect(firstPass, k).toEqual(Array.from({ length: perKey }, (_, i) => i));
        // One key, one partition, one member at a time.
        expect(new Set(seen.filter((s) => s.key === k).map((s) => s.member)).size, k).toBeLessThanOrEqual(2);
      }
      expect(await partitionsOf(`${prefix}shared`)).toBe(4);
      // Both members worked: the partitions were shared.
      expect(new Set(seen.map((s) => s.member))).toEqual(new Set([0, 1]));
    } finally {
      for (const b of buses) await b.close();
    }
  });
});
