import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { createClient, type ConnectRouter } from "@connectrpc/connect";
import { connectNodeAdapter, createGrpcTransport } from "@connectrpc/connect-node";
import { AuthSessionsService } from "@corridor/proto/corridor/auth_sessions/v1/auth_sessions_service_pb.js";
import { PlatformConfigSchema } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import { randomBytes, randomUUID } from "node:crypto";
import * as http2 from "node:http2";
import { createRequire } from "node:module";
import { connect, createServer, type AddressInfo, type Socket } from "node:net";
import { resolve } from "node:path";
import pg from "pg";

/**
 * The processes `npm run bench:floor` (test/bench/floor.ts) measures: each role is one Node process
 * doing one piece of the architecture's shape with nothing else around it, so its CPU time per
 * operation is the least that piece can cost on this machine.
 *
 *   rpc-server   a Connect server (HTTP/2 cleartext, as every service serves) answering
 *                AuthSessionsService.GetPlatformConfig from memory; with REDIS_URL one INCR, with
 *                DATABASE_URL one SELECT by primary key first
 *   gateway      Fastify with GET /config: from memory, or through one Connect unary call
 *                (createGrpcTransport, as the gateway calls services) when RPC_URL is set
 *   kafka-consumer  a kafkajs consumer (the kit bus's settings); with DATABASE_URL each message runs
 *                in an inbox transaction (BEGIN, insert on conflict do nothing, COMMIT); acknowledges
 *                each message to the producer over TCP
 *   kafka-producer  an idempotent kafkajs producer (acks=all, as the kit bus); on an IPC `run` it
 *                keeps `concurrency` messages in flight, each done when every consumer group has
 *                acknowledged it (FLOOR_GROUPS=0: when the broker has it)
 *   pg-txn       a pg.Pool running transactions of N statements (IPC `run`)
 *
 * Settings come as FLOOR_* environment variables; a server role prints `ready <port>` on stdout.
 * fastify, ioredis and kafkajs are resolved from the packages that use them in Corridor (the
 * gateway and the kit), at the versions Corridor runs.
 */

const root = resolve(import.meta.dirname, "../..");
const fromGateway = createRequire(resolve(root, "gateway/package.json"));
const fromKit = createRequire(resolve(root, "packages/kit/package.json"));

/** The few members of fastify, ioredis and kafkajs used here (they are not the test package's dependencies). */
interface FastifyApp {
  get(path: string, handler: () => Promise<unknown> | unknown): void;
  listen(opts: { port: number; host: string }): Promise<string>;
  server: { address(): AddressInfo | string | null; keepAliveTimeout: number };
}
interface RedisClient {
  incr(key: string): Promise<number>;
  pexpire(key: string, ms: number): Promise<number>;
}
interface KafkaMessage {
  key: Buffer | null;
  value: Buffer | null;
}
interface KafkaConsumer {
  connect(): Promise<void>;
  subscribe(o: { topics: string[]; fromBeginning: boolean }): Promise<void>;
  run(o: { autoCommit: boolean; eachMessage: (p: { topic: string; message: KafkaMessage }) => Promise<void> }): Promise<void>;
  on(event: string, listener: () => void): () => void;
  events: { GROUP_JOIN: string };
}
interface KafkaProducer {
  connect(): Promise<void>;
  sendBatch(o: { acks: number; topicMessages: { topic: string; messages: { key: string; value: Buffer; headers: Record<string, string> }[] }[] }): Promise<unknown>;
}
interface KafkaClient {
  consumer(o: Record<string, unknown>): KafkaConsumer;
  producer(o: Record<string, unknown>): KafkaProducer;
}

const env = (name: string): string => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
};

const ready = (port: number) => process.stdout.write(`ready ${port}\n`);

/** A platform configuration the size of a real one (three currencies), built once. */
function sampleConfig() {
  const now = timestampFromDate(new Date());
  return create(PlatformConfigSchema, {
    id: `PlatformConfig:${randomUUID()}`,
    platformId: `Platform:${randomUUID()}`,
    umaDomain: "pay.example.com",
    webhookEndpoint: "https://example.com/hooks",
    supportedCurrencies: ["USD", "EUR", "MXN"].map((currencyCode) => ({
      currencyCode,
      minAmount: 100n,
      maxAmount: 1_000_000n,
      requiredCounterpartyFields: [],
      enabledTransactionTypes: ["INCOMING", "OUTGOING"],
    })),
    createdAt: now,
    updatedAt: now,
  });
}

async function rpcServer(): Promise<void> {
  const config = sampleConfig();
  const Redis = fromGateway("ioredis") as new (url: string) => RedisClient;
  const redis = process.env.REDIS_URL ? new Redis(process.env.REDIS_URL) : undefined;
  const pool = process.env.DATABASE_URL
    ? new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10, idleTimeoutMillis: 0, application_name: env("FLOOR_APP") })
    : undefined;
  const rows = Number(process.env.FLOOR_ROWS ?? 1);
  let n = 0;
  const routes = (router: ConnectRouter) =>
    router.rpc(AuthSessionsService.method.getPlatformConfig, async (req) => {
      n++;
      // The gateway's rate limit: one counter per client and window.
      if (redis) await redis.incr(`floor:rl:${req.platformId}`);
      if (pool) await pool.query("select id, body from floor_config where id = $1", [1 + (n % rows)]);
      return { config };
    });
  const server = http2.createServer(connectNodeAdapter({ routes }));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  ready((server.address() as AddressInfo).port);
}

async function gateway(): Promise<void> {
  const fastify = fromGateway("fastify") as (opts: Record<string, unknown>) => FastifyApp;
  const app = fastify({ logger: false, keepAliveTimeout: 60_000 });
  const rpcUrl = process.env.RPC_URL;
  const local = sampleConfig();
  const toJson = (c: typeof local) => ({
    id: c.id,
    platformId: c.platformId,
    umaDomain: c.umaDomain,
    webhookEndpoint: c.webhookEndpoint,
    supportedCurrencies: c.supportedCurrencies.map((s) => ({ currencyCode: s.currencyCode, minAmount: Number(s.minAmount), maxAmount: Number(s.maxAmount) })),
  });
  if (rpcUrl) {
    const client = createClient(AuthSessionsService, createGrpcTransport({ baseUrl: rpcUrl }));
    const platformId = `Platform:${randomUUID()}`;
    app.get("/config", async () => toJson((await client.getPlatformConfig({ platformId })).config!));
  } else {
    app.get("/config", () => toJson(local));
  }
  await app.listen({ port: 0, host: "127.0.0.1" });
  ready((app.server.address() as AddressInfo).port);
}

function kafka(clientId: string): KafkaClient {
  const { Kafka, logLevel } = fromKit("kafkajs") as { Kafka: new (o: Record<string, unknown>) => KafkaClient; logLevel: { WARN: number } };
  return new Kafka({ clientId, brokers: env("KAFKA_BROKERS").split(","), logLevel: logLevel.WARN, retry: { initialRetryTime: 200, maxRetryTime: 5_000, retries: 8 } });
}

async function kafkaConsumer(): Promise<void> {
  const topic = env("FLOOR_TOPIC");
  const group = env("FLOOR_GROUP");
  const ack: Socket = connect({ host: "127.0.0.1", port: Number(env("FLOOR_ACK_PORT")) });
  ack.setNoDelay(true);
  await new Promise<void>((r, j) => ack.once("connect", r).once("error", j));
  const db = process.env.DATABASE_URL ? new pg.Client({ connectionString: process.env.DATABASE_URL, application_name: env("FLOOR_APP") }) : undefined;
  await db?.connect();
  // The kit bus's consumer settings (packages/kit/src/bus/kafka.ts).
  const consumer = kafka(group).consumer({
    groupId: group,
    allowAutoTopicCreation: false,
    maxWaitTimeInMs: 2_000,
    sessionTimeout: 10_000,
    heartbeatInterval: 3_000,
    retry: { initialRetryTime: 200, maxRetryTime: 10_000, retries: 10 },
  });
  await consumer.connect();
  const joined = new Promise<void>((r) => {
    const off = consumer.on(consumer.events.GROUP_JOIN, () => {
      off();
      r();
    });
  });
  // The topic is this figure's own: from the beginning, so nothing sent before the first fetch is skipped.
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  await consumer.run({
    autoCommit: true,
    eachMessage: async ({ message }) => {
      const eventId = message.key!.toString("utf8");
      if (db) {
        // The kit's inbox (packages/kit/src/outbox/inbox.ts): record (consumer, event id), then the handler.
        await db.query("begin");
        await db.query("insert into floor_inbox (consumer, event_id) values ($1, $2) on conflict (consumer, event_id) do nothing returning event_id", [group, eventId]);
        await db.query("commit");
      }
      ack.write(`${eventId}\n`);
    },
  });
  await joined;
  ready(0);
}

async function kafkaProducer(): Promise<void> {
  const topic = env("FLOOR_TOPIC");
  const groups = Number(env("FLOOR_GROUPS"));
  // The kit bus's producer (idempotent, one request in flight, acks=all).
  const { Partitioners } = fromKit("kafkajs") as { Partitioners: { DefaultPartitioner: unknown } };
  const producer = kafka("floor-producer").producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false, createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  const acks = new Map<string, number>();
  let onAck: ((id: string) => void) | undefined;
  const server = createServer((sock) => {
    sock.setNoDelay(true);
    let buf = "";
    sock.on("data", (d) => {
      buf += d.toString("utf8");
      let i: number;
      while ((i = buf.indexOf("\n")) >= 0) {
        const id = buf.slice(0, i);
        buf = buf.slice(i + 1);
        const n = (acks.get(id) ?? 0) + 1;
        if (n >= groups) {
          acks.delete(id);
          onAck?.(id);
        } else acks.set(id, n);
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  // A message the size of a ledger event (a transaction's state, ~600 bytes) with the outbox's headers.
  const payload = randomBytes(600);
  const send = (id: string) =>
    producer.sendBatch({
      acks: -1,
      topicMessages: [{ topic, messages: [{ key: id, value: payload, headers: { "event-id": id, "event-type": "OUTGOING_PAYMENT_PENDING", "content-type": "application/x-protobuf", traceparent: `00-${randomBytes(16).toString("hex")}-${randomBytes(8).toString("hex")}-01` } }] }],
    });
  const waiting = new Map<string, () => void>();
  onAck = (id) => {
    waiting.get(id)?.();
    waiting.delete(id);
  };
  process.on("message", async (m: { run: { concurrency: number; seconds: number } }) => {
    const { concurrency, seconds } = m.run;
    const latencies: number[] = [];
    const end = Date.now() + seconds * 1000;
    const lane = async () => {
      while (Date.now() < end) {
        const t0 = performance.now();
        const id = `Event:${randomUUID()}`;
        // Registered before sending: the acknowledgement may arrive before sendBatch resolves.
        let timer: NodeJS.Timeout | undefined;
        const consumed =
          groups > 0
            ? new Promise<void>((r, j) => {
                waiting.set(id, r);
                timer = setTimeout(() => j(new Error(`message ${id} not consumed by ${groups} group(s) within 60 s`)), 60_000);
              })
            : undefined;
        await send(id);
        await consumed;
        clearTimeout(timer);
        latencies.push(performance.now() - t0);
      }
    };
    const started = Date.now();
    try {
      await Promise.all(Array.from({ length: concurrency }, lane));
    } catch (err) {
      console.error("floor-peer kafka-producer:", err);
      process.exit(1);
    }
    const elapsed = (Date.now() - started) / 1000;
    process.send!({ done: latencies.length, elapsed, meanMs: latencies.reduce((a, b) => a + b, 0) / Math.max(1, latencies.length) });
  });
  ready((server.address() as AddressInfo).port);
}

async function pgTxn(): Promise<void> {
  const pool = new pg.Pool({ connectionString: env("DATABASE_URL"), max: 10, idleTimeoutMillis: 0, application_name: env("FLOOR_APP") });
  const rows = Number(env("FLOOR_ROWS"));
  // Statement i of a transaction: an update, a select and an insert by key in turn (the shapes of
  // a money movement: lock and change a balance, read a row, record an entry or an outbox row).
  const statement = async (c: pg.PoolClient | pg.Pool, i: number) => {
    const id = 1 + Math.floor(Math.random() * rows);
    if (i % 3 === 0) await c.query("update floor_accounts set balance = balance + $1 where id = $2", [1, id]);
    else if (i % 3 === 1) await c.query("select id, balance from floor_accounts where id = $1", [id]);
    else await c.query("insert into floor_entries (account_id, amount) values ($1, $2)", [id, 1]);
  };
  process.on("message", async (m: { run: { concurrency: number; seconds: number; statements: number; autocommit: boolean } }) => {
    const { concurrency, seconds, statements, autocommit } = m.run;
    const end = Date.now() + seconds * 1000;
    const latencies: number[] = [];
    const lane = async () => {
      while (Date.now() < end) {
        const t0 = performance.now();
        if (autocommit) await statement(pool, 0);
        else {
          const c = await pool.connect();
          try {
            await c.query("begin");
            for (let i = 0; i < statements; i++) await statement(c, i);
            await c.query("commit");
          } finally {
            c.release();
          }
        }
        latencies.push(performance.now() - t0);
      }
    };
    const started = Date.now();
    await Promise.all(Array.from({ length: concurrency }, lane));
    const elapsed = (Date.now() - started) / 1000;
    process.send!({ done: latencies.length, elapsed, meanMs: latencies.reduce((a, b) => a + b, 0) / Math.max(1, latencies.length) });
  });
  // Open every connection now, so the backends exist (and are counted) before the first run.
  const clients = await Promise.all(Array.from({ length: 10 }, () => pool.connect()));
  for (const c of clients) c.release();
  ready(0);
}

const roles: Record<string, () => Promise<void>> = {
  "rpc-server": rpcServer,
  gateway,
  "kafka-consumer": kafkaConsumer,
  "kafka-producer": kafkaProducer,
  "pg-txn": pgTxn,
};
const role = roles[process.argv[2] ?? ""];
if (!role) {
  console.error(`floor-peer: unknown role ${process.argv[2]} (${Object.keys(roles).join(", ")})`);
  process.exit(2);
}
role().catch((err) => {
  console.error(`floor-peer ${process.argv[2]}:`, err);
  process.exit(1);
});
