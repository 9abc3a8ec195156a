// KAFKA_TOPIC_PARTITIONS and KAFKA_TOPIC_REPLICATION_FACTOR (docs/operations.md, "Kafka topics"):
// a service started with them creates the topics it is missing with that many partitions. Runs a
// service's real entry point on the run's Kafka broker (KAFKA_BROKERS) and PostgreSQL
// (DATABASE_URL), under a topic prefix of its own; skips and says why without them, except in CI.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
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

  /** Starts an entry point under this suite's prefix with 3 partitions; returns the topics it created, then stops it. */
  async function topicsCreatedBy(entry: string, ready: RegExp, extraEnv: Record<string, string>) {
    const child = spawn(process.execPath, ["--import", "tsx", resolve(root, entry)], {
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
        ...extraEnv,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    const exited = new Promise<number | null>((done) => child.on("exit", (code) => done(code)));
    try {
      await new Promise<void>((isReady, fail) => {
        const timer = setTimeout(() => fail(new Error(`${entry} did not start within 120 s:\n${output}`)), 120_000);
        const onData = (d: Buffer) => {
          output += String(d);
          if (ready.test(output)) {
            clearTimeout(timer);
            isReady();
          }
        };
        child.stdout.on("data", onData);
        child.stderr.on("data", onData);
        child.on("exit", (code) => {
          clearTimeout(timer);
          fail(new Error(`${entry} exited (${code}) before listening:\n${output}`));
        });
      });
      const mine = (await admin.listTopics()).filter((t) => t.startsWith(prefix));
      return (await admin.fetchTopicMetadata({ topics: mine })).topics;
    } finally {
      child.kill("SIGTERM");
      await exited;
    }
  }

  it("creates the missing topics with 3 partitions when told so", async () => {
    const topics = await topicsCreatedBy("services/sandbox/src/main.ts", /sandbox listening/, {});
    expect(topics.length, "topics the sandbox subscribed to were created").toBeGreaterThan(0);
    for (const t of topics) expect(t.partitions.length, t.name).toBe(3);
  }, 180_000);

  it("a rail connector's process (runConnector) creates its rail topic with 3 partitions too", async () => {
    const drop = mkdtempSync(join(tmpdir(), "sepa-drop-"));
    try {
      const topics = await topicsCreatedBy("connectors/sepa-iso20022/src/main.ts", /connector sepa running/, {
        SEPA_DEBTOR_NAME: "Corridor Test GmbH",
        SEPA_DEBTOR_IBAN: "DE89370400440532013000",
        SEPA_FILE_DROP_DIR: drop,
      });
      const rail = topics.find((t) => t.name === `${prefix}corridor.rails.sepa.v1`);
      expect(rail, `the connector created its rail topic: ${topics.map((t) => t.name).join(", ")}`).toBeDefined();
      expect(rail!.partitions.length).toBe(3);
    } finally {
      rmSync(drop, { recursive: true, force: true });
    }
  }, 180_000);
});
