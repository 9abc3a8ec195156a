import { randomUUID } from "node:crypto";
import { closeSync, openSync, readSync, statSync } from "node:fs";
import { createServer as createHttpServer, type IncomingMessage } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { resolve } from "node:path";
import pg from "pg";
import { eventually, setUpFixtures } from "./http-system.js";
import { startProcessSystem } from "./process-system.js";

/**
 * What one POST /transfer-out takes, through to COMPLETED, in today's split system: the compiled
 * build (dist/app, as `npm run start:split` runs it) on a fresh database, this run's own Redis and
 * Kafka broker, driven through the public API one transfer at a time. Counted from the system's own
 * traces, not from reading the code:
 * - Postgres statements and transactions: `log_statement = all` on the fresh database (set before
 *   any process connects) and the server's log read back; each backend is attributed to the
 *   service whose schema its statements name; a transaction is a BEGIN … COMMIT, an autocommit
 *   statement one outside them;
 * - Connect RPCs: the services' OpenTelemetry SERVER spans of RPCs, exported as OTLP/JSON to a
 *   receiver in this process;
 * - Kafka messages: rows added to every schema's outbox, by topic; deliveries: each message times
 *   the consumer groups subscribed to its topic (the broker's group metadata);
 * - Redis commands: INFO commandstats of this run's Redis.
 * The counts of an idle stretch of the same system (relays' safety-net polls, workers' schedules),
 * scaled to the same length, are subtracted. The synchronous part is what happens between sending
 * the request and its 201.
 */

export interface HopCount {
  transfers: number;
  /** How the counts were obtained. */
  source: string;
  rpcs: number;
  redisCommands: number;
  transactions: number;
  statementsInTransactions: number;
  autocommitStatements: number;
  messages: number;
  deliveries: number;
  /**
   * The part before the 201 (what c=1 latency waits for): RPCs, and the statements of the services
   * that served them in that time, outbox relays' statements left out.
   */
  syncRpcs: number;
  syncTransactions: number;
  syncStatementsInTransactions: number;
  syncAutocommit: number;
  /** Per service and per topic, one line each. */
  details: string[];
}

const root = resolve(import.meta.dirname, "../..");
const fromKit = createRequire(resolve(root, "packages/kit/package.json"));
const pgLog = process.env.FLOOR_PG_LOG || "/var/log/postgresql/postgresql-15-main.log";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------
// Postgres: statements from the server log

interface LogStatement {
  pid: number;
  sql: string;
}

/** Reads the server log from `offset`: every statement logged for `database` (log_statement = all). */
function readStatements(database: string, offset: number, upTo?: number): { statements: LogStatement[]; end: number } {
  const end = upTo ?? statSync(pgLog).size;
  const buf = Buffer.alloc(end - offset);
  const fd = openSync(pgLog, "r");
  try {
    readSync(fd, buf, 0, buf.length, offset);
  } finally {
    closeSync(fd);
  }
  const statements: LogStatement[] = [];
  // "%m [%p] %q%u@%d " then "LOG:  statement: …" (simple protocol) or "LOG:  execute <name>: …" (extended).
  const re = new RegExp(`^\\S+ \\S+ \\S+ \\[(\\d+)\\] \\S+@${database.replace(/[^\w]/g, "\\$&")} LOG:  (?:statement|execute [^:]*): (.*)$`);
  for (const line of buf.toString("utf8").split("\n")) {
    const m = re.exec(line);
    if (m) statements.push({ pid: Number(m[1]), sql: m[2]! });
  }
  return { statements, end };
}

const SCHEMA_RE = /"(agents|auth_sessions|customers_kyc|ledger|notifications|quotes_fx|sandbox)"\./;

interface PgTally {
  /** BEGIN … COMMIT transactions. */
  transactions: number;
  /** Statements inside them (BEGIN and COMMIT not counted). */
  inTransactions: number;
  /** Statements outside any transaction (each its own commit). */
  autocommit: number;
}
const tally = (): PgTally => ({ transactions: 0, inTransactions: 0, autocommit: 0 });

/** The outbox relay's own statements (lease, mark, release): they run beside a request, never in its path. */
const RELAY_RE = /"outbox" (where "published_at" is null|set "(published_at|lease_until)")|with "candidates" as \(select "id" from "\w+"\."outbox"/;

/**
 * Transactions and statements, per backend in log order; `owner` maps a pid to its service and
 * `open` remembers which backends are inside a transaction (across calls).
 */
function countStatements(statements: LogStatement[], owner: Map<number, string>, open: Map<number, boolean>): PgTally & { byService: Map<string, PgTally> } {
  const out = { ...tally(), byService: new Map<string, PgTally>() };
  for (const s of statements) {
    const service = owner.get(s.pid) ?? "unattributed";
    const per = out.byService.get(service) ?? tally();
    out.byService.set(service, per);
    const verb = s.sql.trim().split(/\s+/)[0]!.toLowerCase();
    const add = (k: keyof PgTally) => {
      out[k]++;
      per[k]++;
    };
    if (verb === "begin" || verb === "start") {
      open.set(s.pid, true);
      add("transactions");
    } else if (verb === "commit" || verb === "rollback" || verb === "end") open.set(s.pid, false);
    else add(open.get(s.pid) ? "inTransactions" : "autocommit");
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// RPCs: an OTLP/HTTP JSON receiver

interface RpcSpan {
  service: string;
  name: string;
  startNs: bigint;
  traceId: string;
  spanId: string;
}

async function startOtlpReceiver(): Promise<{ url: string; spans: RpcSpan[]; close(): Promise<void> }> {
  const spans: RpcSpan[] = [];
  type Attr = { key: string; value: { stringValue?: string } };
  type Otlp = { resourceSpans?: { resource?: { attributes?: Attr[] }; scopeSpans?: { spans?: { name: string; kind: number | string; startTimeUnixNano: string; traceId: string; spanId: string; attributes?: Attr[] }[] }[] }[] };
  const server = createHttpServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Otlp;
        for (const rs of body.resourceSpans ?? []) {
          const service = rs.resource?.attributes?.find((a) => a.key === "service.name")?.value.stringValue ?? "?";
          for (const ss of rs.scopeSpans ?? []) {
            for (const s of ss.spans ?? []) {
              const server = s.kind === 2 || s.kind === "SPAN_KIND_SERVER";
              if (server && s.attributes?.some((a) => a.key === "rpc.system")) spans.push({ service, name: s.name, startNs: BigInt(s.startTimeUnixNano), traceId: s.traceId, spanId: s.spanId });
            }
          }
        }
      } catch {
        // not JSON: ignored (the exporter is configured for http/json)
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans, close: () => new Promise((r) => server.close(() => r())) };
}

// ---------------------------------------------------------------------------------------------

async function redisCalls(url: string): Promise<number> {
  const Redis = createRequire(resolve(root, "gateway/package.json"))("ioredis") as new (url: string) => { info(section: string): Promise<string>; quit(): Promise<unknown> };
  const r = new Redis(url);
  try {
    const info = await r.info("commandstats");
    let calls = 0;
    for (const m of info.matchAll(/^cmdstat_(\w+):calls=(\d+)/gm)) if (m[1] !== "info") calls += Number(m[2]);
    return calls;
  } finally {
    await r.quit();
  }
}

/** Topic → number of the system's consumer groups subscribed to it (from the broker). */
async function groupsPerTopic(brokers: string): Promise<Map<string, number>> {
  const { Kafka, logLevel, AssignerProtocol } = fromKit("kafkajs") as {
    Kafka: new (o: Record<string, unknown>) => {
      admin(): {
        connect(): Promise<void>;
        disconnect(): Promise<void>;
        listGroups(): Promise<{ groups: { groupId: string }[] }>;
        describeGroups(ids: string[]): Promise<{ groups: { groupId: string; members: { memberMetadata: Buffer }[] }[] }>;
      };
    };
    logLevel: { WARN: number };
    AssignerProtocol: { MemberMetadata: { decode(b: Buffer): { topics: string[] } | null } };
  };
  const admin = new Kafka({ clientId: "floor-hops", brokers: [brokers], logLevel: logLevel.WARN }).admin();
  await admin.connect();
  try {
    const ids = (await admin.listGroups()).groups.map((g) => g.groupId).filter((g) => g.startsWith("bench-"));
    const out = new Map<string, number>();
    for (const g of (await admin.describeGroups(ids)).groups) {
      const topics = new Set(g.members.flatMap((m) => AssignerProtocol.MemberMetadata.decode(m.memberMetadata)?.topics ?? []));
      for (const t of topics) {
        const bare = t.replace(/^bench-[0-9a-f]+\./, "");
        out.set(bare, (out.get(bare) ?? 0) + 1);
      }
    }
    return out;
  } finally {
    await admin.disconnect();
  }
}

export async function countTransferHops(opts: {
  databaseUrl: string;
  redis: { url: string };
  kafka: { brokers: string };
  transfers: number;
  port?: number;
  /** What is counted: a transfer-out (default), or a quote (100.00 USD to an EUR account) and its execution. */
  operation?: "transfer" | "quote";
}): Promise<HopCount> {
  statSync(pgLog); // fails early, with the path, when the server log cannot be read
  const otlp = await startOtlpReceiver();
  let dbName = "";
  const saved = { ...process.env };
  Object.assign(process.env, {
    OTEL_TRACES_EXPORTER: "otlp",
    OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/json",
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${otlp.url}/v1/traces`,
    OTEL_BSP_SCHEDULE_DELAY: "200",
  });
  let sys: Awaited<ReturnType<typeof startProcessSystem>> | undefined;
  try {
    sys = await startProcessSystem("split", { databaseUrl: opts.databaseUrl, redisUrl: opts.redis.url, kafkaBrokers: opts.kafka.brokers }, opts.port ?? 18600, undefined, {
      async onDatabase(url) {
        dbName = new URL(url).pathname.slice(1);
        const admin = new pg.Client({ connectionString: opts.databaseUrl });
        await admin.connect();
        try {
          await admin.query(`alter database "${dbName}" set log_statement = 'all'`);
        } finally {
          await admin.end();
        }
      },
    });
  } finally {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
  }
  const db = new pg.Client({ connectionString: sys.databaseUrl });
  try {
    await db.connect();
    const fixtures = await setUpFixtures(sys, 1);
    const schemas = (await db.query<{ s: string }>("select table_schema as s from information_schema.tables where table_name = 'outbox'")).rows.map((r) => r.s);
    const outboxRows = async () => {
      const out = new Map<string, number>();
      for (const s of schemas) {
        for (const r of (await db.query<{ topic: string; n: string }>(`select topic, count(*) as n from "${s}".outbox group by topic`)).rows) out.set(r.topic, (out.get(r.topic) ?? 0) + Number(r.n));
      }
      return out;
    };
    const unpublished = async () => {
      let n = 0;
      for (const s of schemas) n += Number((await db.query<{ n: string }>(`select count(*) as n from "${s}".outbox where published_at is null`)).rows[0]!.n);
      return n;
    };
    const settle = async () => {
      await eventually("the outboxes drained", async () => ((await unpublished()) === 0 ? true : undefined), 120_000);
      await sleep(500);
    };
    // Setup's own transfer and events through to the end, then a pause, before anything is counted.
    await eventually("setup's transactions settled", async () => {
      const n = Number((await db.query<{ n: string }>("select count(*) as n from ledger.transactions where status not in ('COMPLETED', 'FAILED')")).rows[0]!.n);
      return n === 0 ? true : undefined;
    }, 120_000);
    await settle();
    await sleep(3_000);

    // Which service each backend serves: the schema its statements name (its pool serves one service).
    const owner = new Map<number, string>();
    const attribute = (statements: LogStatement[]) => {
      for (const s of statements) {
        if (owner.has(s.pid)) continue;
        const m = SCHEMA_RE.exec(s.sql);
        if (m) owner.set(s.pid, m[1]!);
      }
    };
    const me = (await db.query<{ pid: number }>("select pg_backend_pid() as pid")).rows[0]!.pid;
    owner.set(me, "(this benchmark)");
    const open = new Map<number, boolean>();

    // An idle stretch first: what the system does when nothing happens.
    const idleSeconds = 10;
    let offset = statSync(pgLog).size;
    const idleRedis0 = await redisCalls(opts.redis.url);
    const idleStart = BigInt(Date.now()) * 1_000_000n;
    await sleep(idleSeconds * 1000);
    const idleEnd = BigInt(Date.now()) * 1_000_000n;
    const idleRedis = (await redisCalls(opts.redis.url)) - idleRedis0;
    let read = readStatements(dbName, offset);
    offset = read.end;
    attribute(read.statements);
    const idlePg = countStatements(read.statements.filter((s) => s.pid !== me), owner, open);
    await sleep(1_000); // spans of the idle stretch exported
    const idleRpcs = otlp.spans.filter((s) => s.startNs >= idleStart && s.startNs < idleEnd).length;

    // The transfers, one at a time, each through to COMPLETED and its events consumed.
    const body = JSON.stringify({ source: { accountId: fixtures.fiatAccountId }, destination: { accountId: fixtures.usdPayeeId }, amount: 1 });
    const outbox0 = await outboxRows();
    const redis0 = await redisCalls(opts.redis.url);
    const windows: { from: bigint; to: bigint }[] = [];
    const sync = tally();
    const started = Date.now();
    const runStart = BigInt(started) * 1_000_000n;
    for (let i = 0; i < opts.transfers; i++) {
      const from = BigInt(Date.now()) * 1_000_000n;
      const before = statSync(pgLog).size;
      let id: string;
      if (opts.operation === "quote") {
        const quote = { source: { sourceType: "ACCOUNT", accountId: fixtures.fiatAccountId }, destination: { destinationType: "ACCOUNT", accountId: fixtures.eurPayeeId }, lockedCurrencySide: "SENDING", lockedCurrencyAmount: 10_000 };
        const created = await sys.call("POST", "/quotes", quote, { "idempotency-key": randomUUID() });
        if (created.status !== 201 && created.status !== 200) throw new Error(`POST /quotes answered ${created.status}: ${JSON.stringify(created.body)}`);
        const executed = await sys.call("POST", `/quotes/${created.body.id}/execute`, undefined, { "idempotency-key": randomUUID() });
        if (executed.status !== 200) throw new Error(`execute answered ${executed.status}: ${JSON.stringify(executed.body)}`);
        id = executed.body.transactionId;
      } else {
        const res = await sys.call("POST", "/transfer-out", JSON.parse(body), { "idempotency-key": randomUUID() });
        if (res.status !== 201) throw new Error(`POST /transfer-out answered ${res.status}: ${JSON.stringify(res.body)}`);
        id = res.body.id;
      }
      const to = BigInt(Date.now()) * 1_000_000n + 1_000_000n;
      const after = statSync(pgLog).size;
      windows.push({ from, to });
      // The synchronous part: what the log holds between sending and the 201, from the services
      // that served an RPC meanwhile (their spans are exported within OTEL_BSP_SCHEDULE_DELAY).
      await sleep(400);
      const served = new Set(otlp.spans.filter((sp) => sp.startNs >= from && sp.startNs <= to).map((sp) => sp.service.replace(/-/g, "_")));
      const part = readStatements(dbName, before, after).statements.filter((st) => st.pid !== me);
      attribute(part);
      const onPath = part.filter((st) => served.has(owner.get(st.pid) ?? "") && !RELAY_RE.test(st.sql));
      if (process.env.FLOOR_DEBUG) for (const st of onPath) console.error("sync", i, st.pid, owner.get(st.pid), st.sql.slice(0, 160));
      const counted = countStatements(onPath, owner, new Map());
      for (const key of ["transactions", "inTransactions", "autocommit"] as const) sync[key] += counted[key];
      // Polled in the database by this benchmark's own backend (left out of the counts), not through the API.
      await eventually(`transfer ${id} COMPLETED`, async () => {
        const status = (await db.query<{ status: string }>("select status from ledger.transactions where id = $1", [id])).rows[0]?.status;
        if (status === "FAILED") throw new Error(`transfer ${id} FAILED`);
        return status === "COMPLETED" ? true : undefined;
      }, 120_000);
      await settle();
    }
    await sleep(2_000);
    const seconds = (Date.now() - started) / 1000;
    const runEnd = BigInt(Date.now()) * 1_000_000n;
    const redisUsed = (await redisCalls(opts.redis.url)) - redis0;
    const outbox1 = await outboxRows();
    read = readStatements(dbName, offset);
    attribute(read.statements);
    const all = countStatements(read.statements.filter((s) => s.pid !== me), owner, open);
    const groups = await groupsPerTopic(opts.kafka.brokers);
    await sleep(1_500); // the last spans exported

    if (process.env.FLOOR_DEBUG) {
      for (const sp of otlp.spans) console.error("span", sp.service, sp.name, sp.startNs, sp.traceId, sp.spanId);
      for (const st of read.statements) console.error("stmt", st.pid, owner.get(st.pid), st.sql.slice(0, 160));
    }
    const k = opts.transfers;
    const scale = seconds / idleSeconds;
    const inWindow = (s: RpcSpan) => s.startNs >= runStart && s.startNs <= runEnd;
    const rpcsAll = otlp.spans.filter(inWindow).length - idleRpcs * scale;
    const syncSpans = otlp.spans.filter((s) => windows.some((w) => s.startNs >= w.from && s.startNs <= w.to));

    const messagesByTopic = new Map<string, number>();
    for (const [t, n] of outbox1) messagesByTopic.set(t, n - (outbox0.get(t) ?? 0));
    let messages = 0;
    let deliveries = 0;
    const details: string[] = [];
    for (const [t, n] of [...messagesByTopic].sort()) {
      if (n === 0) continue;
      messages += n;
      deliveries += n * (groups.get(t) ?? 0);
      details.push(`Kafka ${t}: ${(n / k).toFixed(2)} messages per transfer × ${groups.get(t) ?? 0} consumer groups`);
    }
    for (const [service, c] of [...all.byService].sort()) {
      const idle = idlePg.byService.get(service) ?? tally();
      const per = (key: keyof PgTally) => (Math.max(0, c[key] - idle[key] * scale) / k).toFixed(1);
      details.push(`Postgres ${service}: ${per("transactions")} transactions of ${per("inTransactions")} statements in all, ${per("autocommit")} autocommit statements, per transfer`);
    }
    const byMethod = new Map<string, number>();
    for (const s of otlp.spans.filter(inWindow)) byMethod.set(`${s.service} ${s.name}`, (byMethod.get(`${s.service} ${s.name}`) ?? 0) + 1);
    details.push(`RPCs: ${[...byMethod].sort().map(([m, n]) => `${m} ${(n / k).toFixed(2)}`).join("; ")} (per transfer, idle ones included: ${((idleRpcs * scale) / k).toFixed(2)})`);
    details.push(`idle stretch (${idleSeconds} s, scaled to the ${seconds.toFixed(1)} s of transfers and subtracted): ${idlePg.transactions} transactions and ${idlePg.autocommit} autocommit statements, ${idleRedis} Redis commands, ${idleRpcs} RPCs`);

    return {
      transfers: k,
      source: `dist/app split system, log_statement=all, OpenTelemetry RPC server spans, outbox rows, broker group metadata, Redis commandstats; an idle stretch of ${idleSeconds} s subtracted`,
      rpcs: Math.max(0, rpcsAll) / k,
      redisCommands: Math.max(0, redisUsed - idleRedis * scale) / k,
      transactions: Math.max(0, all.transactions - idlePg.transactions * scale) / k,
      statementsInTransactions: Math.max(0, all.inTransactions - idlePg.inTransactions * scale) / k,
      autocommitStatements: Math.max(0, all.autocommit - idlePg.autocommit * scale) / k,
      messages: messages / k,
      deliveries: deliveries / k,
      syncRpcs: syncSpans.length / k,
      syncTransactions: sync.transactions / k,
      syncStatementsInTransactions: sync.inTransactions / k,
      syncAutocommit: sync.autocommit / k,
      details,
    };
  } finally {
    await db.end().catch(() => {});
    await sys.stop();
    await otlp.close();
  }
}

