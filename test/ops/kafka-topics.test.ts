// KAFKA_TOPIC_PARTITIONS and KAFKA_TOPIC_REPLICATION_FACTOR (docs/operations.md, "Kafka topics"):
// a service started with them creates the topics it is missing with that many partitions. Runs a
// service's real entry point on the run's Kafka broker (KAFKA_BROKERS) and PostgreSQL
// (DATABASE_URL), under a topic prefix of its own; skips and says why without them, except in CI.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFreshDatabase } from "../infra/databases.js";

const root = resolve(import.meta.dirname, "../..");
// kafkajs is the kit's dependency (the bus); the test asks the broker with the same client.
// (The test package does not depend on kafkajs: these are the few admin calls used here.)
interface KafkaAdmin {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  listTopics(): Promise<string[]>;
  deleteTopics(opts: { topics: string[] }): Promise<void>;
  fetchTopicMetadata(opts: { topics: string[] }): Promise<{ topics: { name: string; partitions: unknown[] }[] }>;
}
const { Kafka } = createRequire(resolve(root, "packages/kit/package.json"))("kafkajs") as {
  Kafka: new (config: { clientId: string; brokers: string[] }) => { admin(): KafkaAdmin };
};

const skip = !process.env.DATABASE_URL ? "DATABASE_URL is not set" : !process.env.KAFKA_BROKERS ? "KAFKA_BROKERS is not set" : "";
if (skip && process.env.CI === "true") throw new Error(`Kafka topic settings suite cannot run in CI: ${skip}`);

describe.skipIf(!!skip)("topics a service creates follow KAFKA_TOPIC_PARTITIONS", () => {
  const prefix = `t${randomBytes(4).toString("hex")}.`;
  const brokers = (process.env.KAFKA_BROKERS ?? "").split(",");
  const admin = new Kafka({ clientId: "kafka-topics-test", brokers }).admin();
  let db: { url: string; drop(): Promise<void> };

  beforeAll(async () => {
    db = await createFreshDatabase(process.env.DATABASE_URL!, "corridor_topics", { migrated: true });
    await admin.connect();
  });
  afterAll(async () => {
    const mine = (await admin.listTopics()).filter((t) => t.startsWith(prefix));
    if (mine.length) await admin.deleteTopics({ topics: mine }).catch(() => {});
    await admin.disconnect();
    await db?.drop();
  });

  it("creates the missing topics with 3 partitions when told so", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", resolve(root, "services", "sandbox", "src", "main.ts")], {
      cwd: root,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? "",
        PORT: "0",
        DATABASE_URL: db.url,
        KAFKA_BROKERS: process.env.KAFKA_BROKERS!,
        KAFKA_TOPIC_PREFIX: prefix,
        KAFKA_TOPIC_PARTITIONS: "3",
        KAFKA_TOPIC_REPLICATION_FACTOR: "1",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    const exited = new Promise<number | null>((done) => child.on("exit", (code) => done(code)));
    try {
      await new Promise<void>((ready, fail) => {
        const timer = setTimeout(() => fail(new Error(`sandbox did not start within 120 s:\n${output}`)), 120_000);
        const onData = (d: Buffer) => {
          output += String(d);
          if (/sandbox listening/.test(output)) {
            clearTimeout(timer);
            ready();
          }
        };
        child.stdout.on("data", onData);
        child.stderr.on("data", onData);
        child.on("exit", (code) => {
          clearTimeout(timer);
          fail(new Error(`sandbox exited (${code}) before listening:\n${output}`));
        });
      });
      const mine = (await admin.listTopics()).filter((t) => t.startsWith(prefix));
      expect(mine.length, "topics the sandbox subscribed to were created").toBeGreaterThan(0);
      const { topics } = await admin.fetchTopicMetadata({ topics: mine });
      for (const t of topics) expect(t.partitions.length, t.name).toBe(3);
    } finally {
      child.kill("SIGTERM");
      await exited;
    }
  }, 180_000);
});
