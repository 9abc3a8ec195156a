import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import { createServer, type AddressInfo } from "node:net";
import { availableParallelism, cpus, loadavg } from "node:os";
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import pg from "pg";
import { freeBrokerPort, startBroker, stopBroker } from "../infra/kafka/broker.mjs";
import { createFreshDatabase } from "../infra/databases.js";
import { HELLO_SERVER, preparePgbench } from "./anchors.js";
import { countTransferHops, type HopCount } from "./floor-hops.js";
import { describeFailure, failed, intFromEnv, runLoad } from "./load.js";
import { cpuSeconds } from "./process-system.js";

/**
 * `npm run bench:floor` (docs/benchmarks.md, "The architecture's floor"): what the fixed shape of
 * split mode — HTTP into a Fastify gateway, Connect/gRPC to a service, Postgres transactions, a
 * transactional outbox relayed to Kafka and consumed in inbox transactions — costs at the least on
 * this machine, measured piece by piece with nothing else around each piece, in one run:
 *
 *  1. a bare node:http hello (the anchor of GET /config);
 *  2. Fastify alone; Fastify + one Connect unary call to a second Node process answering from
 *     memory (the least GET /config can be); the same + one Redis INCR in the second process; the
 *     same + one Redis INCR and one Postgres SELECT by primary key;
 *  3. one Kafka message produced (idempotent kafkajs producer, acks=all) and consumed by a kafkajs
 *     consumer in another process, the broker's JVM counted; the same with three consumer groups;
 *     the same (one group) with the consumer running an inbox transaction in Postgres;
 *  4. one Postgres transaction of N statements through pg (N = 1, 5, 15, and one autocommit
 *     statement), Node's and the Postgres backends' CPU counted;
 *  5. pgbench tpcb-like, scale 10 (the anchor of POST /transfer-out), its backends' CPU counted.
 *
 * Each figure is throughput at c=1 and c=10 and CPU time per operation summed over every process
 * that does the work (user + system, /proc/<pid>/stat), less what those processes spent idle at the
 * same rate (measured just before). The load generator (autocannon in a worker thread, pgbench's
 * own process) is never counted. Then it counts the hops one transfer takes in today's split system
 * (floor-hops.ts, from a real run) and prints the floor: Σ count × unit cost, next to the budget
 * issue 11's targets leave per transfer and per GET /config.
 *
 *   FLOOR_DURATION   seconds measured per figure (default 8)
 *   FLOOR_WARMUP     seconds of unmeasured load before each (default 2)
 *   FLOOR_HOPS       1 (default): count a transfer's hops in a real split system (needs the build in
 *                    dist/app: `npm run build`); 0: skip that and print the unit costs only
 *   FLOOR_TRANSFERS  transfers the hop count averages over (default 20)
 *   DATABASE_URL     PostgreSQL server (default postgres://postgres@127.0.0.1:5432/postgres)
 *   The Kafka broker (the test tooling's, on a free port) and Redis (redis-server on a free port)
 *   are started for the run, so no other user of the machine's shared ones is counted.
 */

const duration = intFromEnv("FLOOR_DURATION", 8, 1);
const warmup = intFromEnv("FLOOR_WARMUP", 2, 0);
const withHops = intFromEnv("FLOOR_HOPS", 1, 0) === 1;
const transfers = intFromEnv("FLOOR_TRANSFERS", 20, 1);
const databaseUrl = process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres";
const root = resolve(import.meta.dirname, "../..");
const peerScript = resolve(import.meta.dirname, "floor-peer.ts");
const fromKit = createRequire(resolve(root, "packages/kit/package.json"));
const IDLE_SECONDS = 3;
const failures: string[] = [];
const cleanups: (() => Promise<void> | void)[] = [];

// ---------------------------------------------------------------------------------------------
// CPU accounting

/** A process whose CPU is counted, by label (several pids may share one label). */
interface Proc {
  label: string;
  pid: number;
}

const safeCpu = (pid: number): number | undefined => {
  try {
    return cpuSeconds(pid);
  } catch {
    return undefined; // gone
  }
};

/**
 * CPU seconds the processes spend between start() and stop(). `procs` is asked again while it runs
 * (every 100 ms): a pid first seen after start() began during the run (a pgbench backend) and
 * counts from zero; a pid that exits keeps its last reading.
 */
function cpuMeter(procs: () => Promise<Proc[]>) {
  const first = new Map<number, number>();
  const last = new Map<number, number>();
  const labels = new Map<number, string>();
  let timer: NodeJS.Timeout | undefined;
  let polling: Promise<void> = Promise.resolve();
  const poll = async (initial: boolean) => {
    for (const p of await procs()) {
      labels.set(p.pid, p.label);
      const v = safeCpu(p.pid);
      if (v === undefined) continue;
      if (!first.has(p.pid)) first.set(p.pid, initial ? v : 0);
      last.set(p.pid, v);
    }
  };
  return {
    async start() {
      await poll(true);
      timer = setInterval(() => (polling = polling.then(() => poll(false)).catch(() => {})), 100);
    },
    /** CPU seconds per label. */
    async stop(): Promise<Map<string, number>> {
      clearInterval(timer);
      await polling;
      for (const pid of last.keys()) {
        const v = safeCpu(pid);
        if (v !== undefined) last.set(pid, v);
      }
      const out = new Map<string, number>();
      for (const [pid, v] of last) out.set(labels.get(pid)!, (out.get(labels.get(pid)!) ?? 0) + v - first.get(pid)!);
      return out;
    },
  };
}

/** CPU seconds per second the processes spend doing nothing, per label. */
async function idleRate(procs: () => Promise<Proc[]>): Promise<Map<string, number>> {
  const m = cpuMeter(procs);
  await m.start();
  await sleep(IDLE_SECONDS * 1000);
  const used = await m.stop();
  return new Map([...used].map(([k, v]) => [k, v / IDLE_SECONDS]));
}

// ---------------------------------------------------------------------------------------------
// Results

interface Unit {
  /** Key used by the floor's arithmetic. */
  key: string;
  label: string;
  concurrency: number;
  opsPerSecond: number;
  meanMs: number;
  p99Ms?: number;
  /** Marginal CPU per operation over all processes, ms. */
  cpuMs: number;
  /** The same per process label, ms. */
  cpuByProcessMs: Map<string, number>;
}
const units: Unit[] = [];
const unit = (key: string, c: number) => units.find((u) => u.key === key && u.concurrency === c);

/** Runs `load` with the CPU of `procs` counted, less their idle rate; records a Unit. */
async function measure(
  key: string,
  label: string,
  concurrency: number,
  procs: () => Promise<Proc[]>,
  idle: Map<string, number>,
  load: () => Promise<{ ops: number; seconds: number; meanMs: number; p99Ms?: number }>,
): Promise<Unit> {
  const meter = cpuMeter(procs);
  await meter.start();
  const r = await load();
  const used = await meter.stop();
  const byProcess = new Map<string, number>();
  for (const [k, v] of used) byProcess.set(k, (Math.max(0, v - (idle.get(k) ?? 0) * r.seconds) / Math.max(1, r.ops)) * 1000);
  const u: Unit = {
    key,
    label,
    concurrency,
    opsPerSecond: r.ops / r.seconds,
    meanMs: r.meanMs,
    p99Ms: r.p99Ms,
    cpuMs: [...byProcess.values()].reduce((a, b) => a + b, 0),
    cpuByProcessMs: byProcess,
  };
  units.push(u);
  console.error(`  ${label} c=${concurrency}: ${fmt(u.opsPerSecond, 0)}/s, mean ${fmt(u.meanMs, 2)} ms, CPU ${fmt(u.cpuMs, 3)} ms/op (${[...byProcess].map(([k, v]) => `${k} ${fmt(v, 3)}`).join(", ")})`);
  return u;
}

// ---------------------------------------------------------------------------------------------
// Processes

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Peer {
  pid: number;
  port: number;
  child: ChildProcess;
  /** Sends an IPC `run` and resolves with the peer's answer. */
  run<T>(msg: unknown): Promise<T>;
}

/** Starts a floor-peer.ts role in a process of its own (through tsx) and waits for `ready <port>`. */
async function startPeer(role: string, extraEnv: Record<string, string>): Promise<Peer> {
  const env = { ...(process.env as Record<string, string>), ...extraEnv };
  const child = spawn(process.execPath, ["--import", "tsx", peerScript, role], { cwd: root, env, stdio: ["ignore", "pipe", "inherit", "ipc"] });
  cleanups.push(() => {
    if (child.exitCode === null) child.kill("SIGKILL");
  });
  const port = await new Promise<number>((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`floor-peer ${role} not ready within 60 s`)), 60_000);
    createInterface({ input: child.stdout! }).on("line", (l) => {
      const m = /^ready (\d+)$/.exec(l);
      if (m) {
        clearTimeout(timer);
        res(Number(m[1]));
      }
    });
    child.once("exit", (code) => rej(new Error(`floor-peer ${role} exited with ${code}`)));
  });
  return {
    pid: child.pid!,
    port,
    child,
    run: <T>(msg: unknown) =>
      new Promise<T>((res, rej) => {
        const exited = (code: number | null) => rej(new Error(`floor-peer ${role} exited with ${code}`));
        child.once("exit", exited);
        child.once("message", (m) => {
          child.off("exit", exited);
          res(m as T);
        });
        child.send(msg as object);
      }),
  };
}

const stopProcess = (c: ChildProcess) => {
  if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
};

const freePort = () =>
  new Promise<number>((res, rej) => {
    const s = createServer();
    s.once("error", rej);
    s.listen(0, "127.0.0.1", () => {
      const p = (s.address() as AddressInfo).port;
      s.close(() => res(p));
    });
  });

/** A redis-server of this run's own on a free port (the machine's shared one has other clients). */
async function startRedis(): Promise<{ url: string; pid: number }> {
  const port = await freePort();
  const child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdio: "ignore" });
  cleanups.push(() => stopProcess(child));
  const url = `redis://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    const up = await new Promise<boolean>((res) => {
      const s = createServer();
      s.once("error", () => res(true)); // bound: redis is listening
      s.listen(port, "127.0.0.1", () => s.close(() => res(false)));
    });
    if (up) return { url, pid: child.pid! };
    await sleep(50);
  }
  throw new Error("redis-server did not start");
}

/** Backend pids of this run's connections tagged with `applicationName`. */
async function backends(admin: pg.Client, applicationName: string): Promise<Proc[]> {
  const r = await admin.query<{ pid: number }>("select pid from pg_stat_activity where application_name = $1", [applicationName]);
  return r.rows.map((row) => ({ label: "postgres", pid: row.pid }));
}

// ---------------------------------------------------------------------------------------------
// The pieces

async function httpUnit(key: string, label: string, port: number, procs: () => Promise<Proc[]>, path = "/config"): Promise<void> {
  const idle = await idleRate(procs);
  for (const c of [1, 10]) {
    const job = { url: `http://127.0.0.1:${port}`, method: "GET" as const, path, headers: {}, uniqueIdempotencyKey: false, connections: c };
    if (warmup > 0) await runLoad({ ...job, durationSeconds: warmup });
    await measure(key, label, c, procs, idle, async () => {
      const r = await runLoad({ ...job, durationSeconds: duration });
      if (failed(r)) failures.push(describeFailure(label, `c=${c}`, r));
      return { ops: r.ok, seconds: duration, meanMs: r.latency.mean, p99Ms: r.latency.p99 };
    });
  }
}

async function measureHttpPieces(admin: pg.Client, scratchUrl: string, redis: { url: string; pid: number }): Promise<void> {
  console.error("[floor] 1. bare node:http hello");
  const hello = spawn(process.execPath, ["-e", HELLO_SERVER], { stdio: ["ignore", "pipe", "inherit"] });
  cleanups.push(() => stopProcess(hello));
  const helloPort = await new Promise<number>((res) => hello.stdout!.once("data", (d) => res(Number(String(d).trim()))));
  await httpUnit("node", "bare node:http hello", helloPort, async () => [{ label: "node:http", pid: hello.pid! }], "/");
  stopProcess(hello);

  console.error("[floor] 2. Fastify, Fastify + one Connect call");
  const alone = await startPeer("gateway", {});
  await httpUnit("fastify", "Fastify route, from memory", alone.port, async () => [{ label: "fastify", pid: alone.pid }]);
  stopProcess(alone.child);

  const server = await startPeer("rpc-server", {});
  const gw = await startPeer("gateway", { RPC_URL: `http://127.0.0.1:${server.port}` });
  await httpUnit("rpc", "Fastify + 1 Connect RPC (answer from memory)", gw.port, async () => [
    { label: "fastify", pid: gw.pid },
    { label: "service", pid: server.pid },
  ]);
  stopProcess(gw.child);
  stopProcess(server.child);

  const server1 = await startPeer("rpc-server", { REDIS_URL: redis.url });
  const gw1 = await startPeer("gateway", { RPC_URL: `http://127.0.0.1:${server1.port}` });
  await httpUnit("rpc-redis", "Fastify + 1 RPC + Redis INCR", gw1.port, async () => [
    { label: "fastify", pid: gw1.pid },
    { label: "service", pid: server1.pid },
    { label: "redis", pid: redis.pid },
  ]);
  stopProcess(gw1.child);
  stopProcess(server1.child);

  const app = `floor-rpc-${randomBytes(4).toString("hex")}`;
  const server2 = await startPeer("rpc-server", { REDIS_URL: redis.url, DATABASE_URL: scratchUrl, FLOOR_APP: app, FLOOR_ROWS: "1000" });
  const gw2 = await startPeer("gateway", { RPC_URL: `http://127.0.0.1:${server2.port}` });
  await httpUnit("rpc-redis-pg", "Fastify + 1 RPC + Redis INCR + Postgres SELECT by key", gw2.port, async () => [
    { label: "fastify", pid: gw2.pid },
    { label: "service", pid: server2.pid },
    { label: "redis", pid: redis.pid },
    ...(await backends(admin, app)),
  ]);
  stopProcess(gw2.child);
  stopProcess(server2.child);
}

interface RunAnswer {
  done: number;
  elapsed: number;
  meanMs: number;
}

async function measureKafkaPieces(admin: pg.Client, scratchUrl: string, broker: { brokers: string; pid: number }): Promise<void> {
  const { Kafka, logLevel } = fromKit("kafkajs") as {
    Kafka: new (o: Record<string, unknown>) => { admin(): { connect(): Promise<void>; createTopics(o: Record<string, unknown>): Promise<boolean>; disconnect(): Promise<void> } };
    logLevel: { WARN: number };
  };
  const kadmin = new Kafka({ clientId: "floor-admin", brokers: [broker.brokers], logLevel: logLevel.WARN }).admin();
  await kadmin.connect();
  try {
    for (const [key, label, groups, inbox] of [
      ["kafka", "Kafka message, produced + consumed by 1 group", 1, false],
      ["kafka-produce", "Kafka message, produced (acks=all), no consumer", 0, false],
      ["kafka-3", "Kafka message, produced + consumed by 3 groups", 3, false],
      ["kafka-inbox", "Kafka message + inbox transaction in the consumer", 1, true],
    ] as const) {
      console.error(`[floor] 3. ${label}`);
      const topic = `floor-${key}-${randomBytes(4).toString("hex")}`;
      await kadmin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 1, replicationFactor: 1 }] });
      const producer = await startPeer("kafka-producer", { KAFKA_BROKERS: broker.brokers, FLOOR_TOPIC: topic, FLOOR_GROUPS: String(groups) });
      const app = `floor-inbox-${randomBytes(4).toString("hex")}`;
      const consumers = await Promise.all(
        Array.from({ length: groups }, (_, i) =>
          startPeer("kafka-consumer", {
            KAFKA_BROKERS: broker.brokers,
            FLOOR_TOPIC: topic,
            FLOOR_GROUP: `${topic}-g${i}`,
            FLOOR_ACK_PORT: String(producer.port),
            FLOOR_APP: app,
            ...(inbox ? { DATABASE_URL: scratchUrl } : {}),
          }),
        ),
      );
      const procs = async () => [
        { label: "producer", pid: producer.pid },
        ...consumers.map((c) => ({ label: "consumer", pid: c.pid })),
        { label: "kafka", pid: broker.pid },
        ...(inbox ? await backends(admin, app) : []),
      ];
      // The broker's JVM compiles its hot paths during the first seconds of traffic: warm it longer
      // before the first figure.
      if (key === "kafka") await producer.run<RunAnswer>({ run: { concurrency: 10, seconds: Math.max(10, warmup) } });
      const idle = await idleRate(procs);
      for (const c of [1, 10]) {
        if (warmup > 0) await producer.run<RunAnswer>({ run: { concurrency: c, seconds: warmup } });
        await measure(key, label, c, procs, idle, async () => {
          const r = await producer.run<RunAnswer>({ run: { concurrency: c, seconds: duration } });
          return { ops: r.done, seconds: r.elapsed, meanMs: r.meanMs };
        });
      }
      for (const p of [producer, ...consumers]) stopProcess(p.child);
    }
  } finally {
    await kadmin.disconnect();
  }
}

async function measurePostgresPieces(admin: pg.Client, scratchUrl: string): Promise<void> {
  console.error("[floor] 4. Postgres transactions through pg");
  const app = `floor-txn-${randomBytes(4).toString("hex")}`;
  const peer = await startPeer("pg-txn", { DATABASE_URL: scratchUrl, FLOOR_APP: app, FLOOR_ROWS: "100000" });
  const procs = async () => [{ label: "node", pid: peer.pid }, ...(await backends(admin, app))];
  const idle = await idleRate(procs);
  for (const [key, label, statements, autocommit] of [
    ["pg-auto", "1 statement, autocommit", 1, true],
    ["pg-1", "transaction: BEGIN + 1 statement + COMMIT", 1, false],
    ["pg-5", "transaction: BEGIN + 5 statements + COMMIT", 5, false],
    ["pg-15", "transaction: BEGIN + 15 statements + COMMIT", 15, false],
  ] as const) {
    for (const c of [1, 10]) {
      const run = { concurrency: c, statements, autocommit };
      if (warmup > 0) await peer.run<RunAnswer>({ run: { ...run, seconds: warmup } });
      await measure(key, label, c, procs, idle, async () => {
        const r = await peer.run<RunAnswer>({ run: { ...run, seconds: duration } });
        return { ops: r.done, seconds: r.elapsed, meanMs: r.meanMs };
      });
    }
  }
  stopProcess(peer.child);
}

async function measurePgbench(admin: pg.Client): Promise<void> {
  console.error("[floor] 5. pgbench tpcb-like, scale 10");
  const pgb = await preparePgbench(databaseUrl);
  try {
    const dbName = new URL(pgb.url).pathname.slice(1);
    const procs = async () => {
      const r = await admin.query<{ pid: number }>("select pid from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()", [dbName]);
      return r.rows.map((row) => ({ label: "postgres", pid: row.pid }));
    };
    for (const c of [1, 10]) {
      await measure("pgbench", "pgbench tpcb-like", c, procs, new Map(), async () => {
        const r = await pgb.run(c, duration);
        return { ops: r.tps * duration, seconds: duration, meanMs: r.meanMs };
      });
    }
  } finally {
    await pgb.drop();
  }
}

// ---------------------------------------------------------------------------------------------
// The floor

const fmt = (n: number | undefined, digits = 0) =>
  n === undefined || Number.isNaN(n) ? "–" : n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });

/** Unit costs (CPU ms) the floor is built from, at c=10. */
function unitCosts() {
  const cpu = (key: string) => {
    const u = unit(key, 10);
    if (!u) throw new Error(`no measurement of ${key} at c=10`);
    return u.cpuMs;
  };
  const pg1 = cpu("pg-1");
  const pg5 = cpu("pg-5");
  const pg15 = cpu("pg-15");
  // Least squares over N = 1, 5, 15: cost = transaction + N × statement.
  const xs = [1, 5, 15];
  const ys = [pg1, pg5, pg15];
  const mx = xs.reduce((a, b) => a + b, 0) / 3;
  const my = ys.reduce((a, b) => a + b, 0) / 3;
  const statement = xs.reduce((a, x, i) => a + (x - mx) * (ys[i]! - my), 0) / xs.reduce((a, x) => a + (x - mx) ** 2, 0);
  const transaction = my - statement * mx;
  const produce = cpu("kafka-produce");
  // A consumer group's delivery (its fetch, the broker's side of it, offset commits), two ways: one
  // group alone, and per group of three. The floor takes the lower.
  const deliveryAlone = Math.max(0, cpu("kafka") - produce);
  const deliveryOfThree = Math.max(0, (cpu("kafka-3") - produce) / 3);
  return {
    httpIn: cpu("fastify"),
    rpc: cpu("rpc") - cpu("fastify"),
    // The difference is small against the RPC's own noise: never less than redis-server's own share.
    redis: Math.max(cpu("rpc-redis") - cpu("rpc"), unit("rpc-redis", 10)?.cpuByProcessMs.get("redis") ?? 0),
    select: Math.max(0, cpu("rpc-redis-pg") - cpu("rpc-redis")),
    transaction,
    statement,
    autocommit: cpu("pg-auto"),
    produce,
    deliveryAlone,
    deliveryOfThree,
    delivery: Math.min(deliveryAlone, deliveryOfThree),
    inbox: cpu("kafka-inbox") - cpu("kafka"),
    pgbench: cpu("pgbench"),
    node: cpu("node"),
  };
}

function printReport(machine: string, hops: HopCount | undefined): void {
  console.log(`The architecture's floor: each piece alone, ${duration} s per figure after ${warmup} s warm-up; CPU is user + system over every process doing the work, less their idle rate.`);
  console.log(machine);
  console.log("");
  console.log("| piece | c=1 | c=10 | CPU per op, c=1 | CPU per op, c=10 (by process) |");
  console.log("| --- | ---: | ---: | ---: | --- |");
  const seen = new Set<string>();
  for (const u of units) {
    if (seen.has(u.key)) continue;
    seen.add(u.key);
    const c1 = unit(u.key, 1);
    const c10 = unit(u.key, 10);
    const rate = (x?: Unit) => (x ? `${fmt(x.opsPerSecond, 0)}/s, mean ${fmt(x.meanMs, 2)} ms${x.p99Ms !== undefined ? `, p99 ${fmt(x.p99Ms, 0)} ms` : ""}` : "–");
    const by = c10 ? [...c10.cpuByProcessMs].map(([k, v]) => `${k} ${fmt(v, 3)}`).join(", ") : "";
    console.log(`| ${u.label} | ${rate(c1)} | ${rate(c10)} | ${fmt(c1?.cpuMs, 3)} ms | **${fmt(c10?.cpuMs, 3)} ms** (${by}) |`);
  }
  const k = unitCosts();
  console.log("");
  console.log("Unit costs derived from the c=10 figures (CPU ms per operation):");
  console.log(`- HTTP request into Fastify: ${fmt(k.httpIn, 3)}; one Connect RPC hop (both ends): ${fmt(k.rpc, 3)}; a Redis command (INCR; the difference to the RPC alone, at least redis-server's own CPU): ${fmt(k.redis, 3)}; a Postgres SELECT by key (pool query, autocommit): ${fmt(k.select, 3)}`);
  console.log(`- Postgres transaction (BEGIN/COMMIT and the commit): ${fmt(k.transaction, 3)} + ${fmt(k.statement, 3)} per statement (least squares over N = 1, 5, 15); an autocommit statement: ${fmt(k.autocommit, 3)}`);
  console.log(
    `- Kafka: producing a message ${fmt(k.produce, 3)}; a consumer group's delivery ${fmt(k.deliveryAlone, 3)} alone, ${fmt(k.deliveryOfThree, 3)} each of three (the floor takes ${fmt(k.delivery, 3)}); the consumer's inbox transaction added ${fmt(k.inbox, 3)} (for comparison only: the floor costs inbox transactions as Postgres transactions)`,
  );
  console.log(`- anchors: pgbench tpcb-like transaction ${fmt(k.pgbench, 3)}; bare node:http request ${fmt(k.node, 3)}`);

  const cores = availableParallelism();
  const pgbench10 = unit("pgbench", 10)!;
  const node10 = unit("node", 10)!;
  const transferTarget = 0.15 * pgbench10.opsPerSecond;
  const configTarget = 0.08 * node10.opsPerSecond;
  const transferBudget = (cores * 1000) / transferTarget;
  const configBudget = (cores * 1000) / configTarget;
  const config = unit("rpc", 10)!;
  const configFull = unit("rpc-redis-pg", 10)!;
  console.log("");
  console.log("| figure | floor of the fixed shape | issue 11 target | CPU budget at the target | floor ÷ budget | throughput the floor allows on " + cores + " cores | ÷ anchor |");
  console.log("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
  console.log(
    `| GET /config c=10, least shape (HTTP in + 1 RPC, answer from memory) | ${fmt(config.cpuMs, 3)} ms CPU; measured ${fmt(config.opsPerSecond, 0)}/s, p99 ${fmt(config.p99Ms, 0)} ms | ≥ 0.08 × node:http ${fmt(node10.opsPerSecond, 0)}/s = ${fmt(configTarget, 0)}/s, p99 ≤ 10 ms | ${fmt(configBudget, 3)} ms | ${fmt(config.cpuMs / configBudget, 2)} | ${fmt((cores * 1000) / config.cpuMs, 0)}/s | ${fmt(config.opsPerSecond / node10.opsPerSecond, 3)} measured |`,
  );
  console.log(
    `| GET /config c=10, + Redis INCR + Postgres SELECT | ${fmt(configFull.cpuMs, 3)} ms CPU; measured ${fmt(configFull.opsPerSecond, 0)}/s, p99 ${fmt(configFull.p99Ms, 0)} ms | same | ${fmt(configBudget, 3)} ms | ${fmt(configFull.cpuMs / configBudget, 2)} | ${fmt((cores * 1000) / configFull.cpuMs, 0)}/s | ${fmt(configFull.opsPerSecond / node10.opsPerSecond, 3)} measured |`,
  );
  if (hops) {
    const f = transferFloor(hops, k);
    console.log(
      `| POST /transfer-out c=10 (to COMPLETED) | ${fmt(f.total, 2)} ms CPU | ≥ 0.15 × pgbench ${fmt(pgbench10.opsPerSecond, 0)} TPS = ${fmt(transferTarget, 0)}/s | ${fmt(transferBudget, 2)} ms | ${fmt(f.total / transferBudget, 2)} | ${fmt((cores * 1000) / f.total, 0)}/s | ${fmt((cores * 1000) / f.total / pgbench10.opsPerSecond, 3)} |`,
    );
    const lean = transferFloor(LEANEST, k);
    console.log(
      `| POST /transfer-out c=10, the leanest transfer this shape allows (1 RPC, 4 transactions of 14 statements, 6 relay statements, 3 messages × 1 group; assumed) | ${fmt(lean.total, 2)} ms CPU | same | ${fmt(transferBudget, 2)} ms | ${fmt(lean.total / transferBudget, 2)} | ${fmt((cores * 1000) / lean.total, 0)}/s | ${fmt((cores * 1000) / lean.total / pgbench10.opsPerSecond, 3)} |`,
    );
    const c1 = transferLatencyFloor(hops);
    console.log(
      `| POST /transfer-out c=1 mean: the path to the 201 (HTTP in, ${fmt(hops.syncRpcs, 1)} RPCs, ${fmt(hops.syncTransactions, 1)} transactions of ${fmt(hops.syncStatementsInTransactions, 1)} statements, ${fmt(hops.syncAutocommit, 1)} autocommit statements, one after another) | ${fmt(c1, 2)} ms | ≤ 5 ms | – | ${fmt(c1 / 5, 2)} | – | – |`,
    );
    console.log(`| POST /transfer-out c=1 mean, the leanest path to the 201 (HTTP in, 1 RPC, 1 transaction of 4 statements) | ${fmt(transferLatencyFloor(LEANEST), 2)} ms | ≤ 5 ms | – | ${fmt(transferLatencyFloor(LEANEST) / 5, 2)} | – | – |`);
    console.log("");
    console.log(`One transfer in today's split system, counted over ${hops.transfers} sequential transfers to COMPLETED (${hops.source}):`);
    console.log("");
    console.log("| hop | per transfer | unit cost (ms CPU) | floor (ms CPU) |");
    console.log("| --- | ---: | ---: | ---: |");
    for (const line of f.lines) console.log(`| ${line.what} | ${fmt(line.count, 2)} | ${fmt(line.unit, 3)} | ${fmt(line.count * line.unit, 2)} |`);
    console.log(`| **total** | | | **${fmt(f.total, 2)}** |`);
    if (hops.details.length) {
      console.log("");
      for (const d of hops.details) console.log(`- ${d}`);
    }
  }
  console.log("");
  console.log("Every figure above was measured in this run.");
}

/**
 * The leanest transfer the fixed shape allows, as a design (these counts are assumptions, not
 * measurements): 1 HTTP request, 1 Redis command (the rate limit; the principal cached in
 * process, the Idempotency-Key claimed inside the ledger's transaction), 1 RPC (gateway → ledger);
 * the ledger's transaction of 4 statements (claim + lock + hold, the transaction row, the outbox
 * rows in one insert, the stored answer); 3 messages (rail instruction, rail outcome, one ledger
 * event for webhooks), each delivered to exactly one consumer group (sandbox, ledger,
 * notifications) in an inbox transaction of 3, 5 and 2 statements (inbox row + the handler's
 * writes); each of the 3 producing transactions relayed by a lease and a mark (2 autocommit
 * statements, no batching across transfers).
 */
const LEANEST: HopCount = {
  transfers: 1,
  source: "design assumption",
  rpcs: 1,
  redisCommands: 1,
  transactions: 4,
  statementsInTransactions: 4 + 3 + 5 + 2,
  autocommitStatements: 6,
  messages: 3,
  deliveries: 3,
  syncRpcs: 1,
  syncTransactions: 1,
  syncStatementsInTransactions: 4,
  syncAutocommit: 0,
  details: [],
};

/** Σ count × unit cost for one transfer. */
function transferFloor(h: HopCount, k: ReturnType<typeof unitCosts>) {
  const lines = [
    { what: "HTTP request into the gateway", count: 1, unit: k.httpIn },
    { what: "Connect RPCs (gateway → service and service → service)", count: h.rpcs, unit: k.rpc },
    { what: "Redis commands (each costed as an INCR)", count: h.redisCommands, unit: k.redis },
    { what: "Postgres transactions (BEGIN … COMMIT)", count: h.transactions, unit: k.transaction },
    { what: "statements inside them", count: h.statementsInTransactions, unit: k.statement },
    { what: "autocommit statements (outbox relay leases and marks, reads)", count: h.autocommitStatements, unit: k.autocommit },
    { what: "Kafka messages produced", count: h.messages, unit: k.produce },
    { what: "consumer-group deliveries (messages × groups subscribed)", count: h.deliveries, unit: k.delivery },
  ];
  return { lines, total: lines.reduce((a, l) => a + l.count * l.unit, 0) };
}

/**
 * The least c=1 latency of the path to a transfer's 201: each hop's c=1 mean measured alone, in
 * sequence (nothing after the 201 — relaying and consuming the events — is waited for).
 */
function transferLatencyFloor(h: HopCount): number {
  const mean = (key: string) => unit(key, 1)!.meanMs;
  const rpc = Math.max(0, mean("rpc") - mean("fastify"));
  const perStatement = Math.max(0, (mean("pg-15") - mean("pg-1")) / 14);
  return (
    mean("fastify") +
    h.syncRpcs * rpc +
    h.syncTransactions * mean("pg-1") +
    Math.max(0, h.syncStatementsInTransactions - h.syncTransactions) * perStatement +
    h.syncAutocommit * mean("pg-auto")
  );
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<number> {
  const machineAtStart = `Node ${process.version}, ${availableParallelism()} CPUs (${cpus()[0]?.model.trim() ?? "unknown"}), load average at start ${loadavg().map((l) => l.toFixed(2)).join(" ")}`;
  const scratch = await createFreshDatabase(databaseUrl, "corridor_floor");
  cleanups.push(() => scratch.drop());
  const admin = new pg.Client({ connectionString: scratch.url });
  await admin.connect();
  cleanups.push(() => admin.end());
  await admin.query(`
    create table floor_config (id int primary key, body text not null);
    insert into floor_config select i, repeat('x', 400) from generate_series(1, 1000) i;
    create table floor_accounts (id int primary key, balance bigint not null default 0, updated_at timestamptz not null default now());
    insert into floor_accounts (id) select i from generate_series(1, 100000) i;
    create table floor_entries (id bigserial primary key, account_id int not null, amount bigint not null, created_at timestamptz not null default now());
    create table floor_inbox (consumer text not null, event_id text not null, processed_at timestamptz not null default now(), primary key (consumer, event_id));
    analyze;
  `);
  const redis = await startRedis();

  console.error("[floor] starting a Kafka broker of this run's own");
  const port = await freeBrokerPort();
  const b = await startBroker({ port, reuse: false, ownerPid: process.pid, ephemeral: true });
  cleanups.push(() => stopBroker({ port, removeData: true }));
  if (b.pid === null) throw new Error("the broker's pid is unknown; its CPU cannot be counted");
  const broker = { brokers: b.brokers, pid: b.pid };

  let hops: HopCount | undefined;
  try {
    await measureHttpPieces(admin, scratch.url, redis);
    await measureKafkaPieces(admin, scratch.url, broker);
    await measurePostgresPieces(admin, scratch.url);
    await measurePgbench(admin);
    if (withHops) {
      console.error(`[floor] counting one transfer's hops in the split system (${transfers} transfers)`);
      hops = await countTransferHops({ databaseUrl, redis, kafka: broker, transfers });
    }
  } finally {
    for (const c of cleanups.reverse()) await Promise.resolve(c()).catch((err) => console.error("cleanup:", err));
  }
  printReport(`${machineAtStart}; at the end ${loadavg().map((l) => l.toFixed(2)).join(" ")}`, hops);
  if (failures.length) {
    console.error(`\nBENCHMARK FAILED: errors or non-2xx answers under load\n${failures.join("\n")}`);
    return 1;
  }
  return 0;
}

// Stopped from outside: still stop the peers, Redis and the broker, and drop the scratch database.
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    void (async () => {
      for (const c of cleanups.reverse()) await Promise.resolve(c()).catch(() => {});
      process.exit(130);
    })();
  });
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error("BENCHMARK FAILED:", err);
    process.exit(1);
  },
);
