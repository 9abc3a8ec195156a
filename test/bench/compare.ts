import { randomUUID } from "node:crypto";
import { resolve } from "node:path";
import { availableParallelism, cpus, loadavg } from "node:os";
import { brokerAnswers, defaultPort, startBroker, stopBroker } from "../infra/kafka/broker.mjs";
import { measureBareNode, preparePgbench, type PgbenchResult } from "./anchors.js";
import { API_VERSION, eventually, setUpFixtures, setUpFundedCustomers } from "./http-system.js";
import { describeFailure, failed, intFromEnv, runLoad, type LoadJob, type LoadSummary } from "./load.js";
import { cpuSeconds, rssMiB, startProcessSystem, type Mode, type ProcessSystem } from "./process-system.js";
import { measureWebhookLatency } from "./webhook-latency.js";

/**
 * `npm run bench:compare` (docs/benchmarks.md, "Compared with PostgreSQL and Node"): Corridor's
 * money path in split mode and in embedded mode on PostgreSQL, next to anchors measured in the
 * same run on the same machine — pgbench's TPC-B-like transaction and a bare node:http
 * hello-world — and printed as ratios. Each round measures the anchors, then starts each mode from
 * the compiled build (as `npm start` / `npm run start:split` do), sets up a sandbox platform through
 * the public API, drives every scenario, and stops it; the table shows the median of the rounds.
 * Any error, timeout or non-2xx answer fails the run (exit 1). It never runs in `npm test`.
 *
 *   BENCH_ROUNDS       rounds (default 3; the table shows medians)
 *   BENCH_DURATION     seconds measured per scenario (default 10)
 *   BENCH_WARMUP       seconds of unmeasured load before each (default 2)
 *   BENCH_MODES        comma-separated subset of split,split-replicas,embedded-postgres (default
 *                      split,embedded-postgres; split-replicas runs two processes of every service,
 *                      and with split beside it the report prints the throughput ratio of the two)
 *   BENCH_WEBHOOK_PAYMENTS  transfers in the webhook burst (default 600; 0 skips it)
 *   BENCH_CUSTOMERS    funded customers the spread transfers rotate over (default 50)
 *   DATABASE_URL       PostgreSQL server (default postgres://postgres@127.0.0.1:5432/postgres)
 *   REDIS_URL          Redis (default redis://127.0.0.1:6379)
 *   KAFKA_BROKERS      Kafka for split mode; unset: the test tooling's single-node broker is started
 *   BENCH_PORT         the gateway's port (default 18400; split services on +11..+17)
 *   BENCH_BASELINE     a checkout of an earlier commit (installed and built with its own scripts):
 *                      each mode then also runs from it, right before this tree's run of the same
 *                      mode, so before and after are measured minutes apart under the same load
 */

const rounds = intFromEnv("BENCH_ROUNDS", 3, 1);
const duration = intFromEnv("BENCH_DURATION", 10, 1);
const warmup = intFromEnv("BENCH_WARMUP", 2, 0);
const webhookPayments = intFromEnv("BENCH_WEBHOOK_PAYMENTS", 600, 0);
const fundedCount = intFromEnv("BENCH_CUSTOMERS", 50, 1);
const port = intFromEnv("BENCH_PORT", 18400, 1024);
const databaseUrl = process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres";
const redisUrl = process.env.REDIS_URL || "redis://127.0.0.1:6379";
const modes = (process.env.BENCH_MODES?.split(",").map((s) => s.trim()).filter(Boolean) ?? ["split", "embedded-postgres"]) as Mode[];
for (const m of modes) if (m !== "split" && m !== "split-replicas" && m !== "embedded-postgres") throw new Error(`BENCH_MODES: unknown mode ${m} (split, split-replicas, embedded-postgres)`);
const baseline = process.env.BENCH_BASELINE ? resolve(process.env.BENCH_BASELINE) : undefined;
/** The columns: each mode of this tree, each preceded by the baseline's run of it. */
const runs: { label: string; mode: Mode; root?: string }[] = modes.flatMap((mode) => [
  ...(baseline ? [{ label: `baseline ${mode}`, mode, root: baseline }] : []),
  { label: mode, mode },
]);

/** One measured figure of one round. */
interface Figure {
  value: number;
  p99?: number;
  mean?: number;
}
type Key =
  | "pgbench-c1" | "pgbench-c10" | "node-c1" | "node-c10"
  | "transfer-spread-c1" | "transfer-spread-c10" | "transfer-hot-c10" | "config-c1" | "config-c10" | "quote-execute-c10"
  | "webhook-p50" | "webhook-p99" | "launch" | "rss-idle" | "rss-max-process" | "cpu-idle";
const results = new Map<string, Figure[]>(); // `${mode}|${key}` or `anchor|${key}`
const note = (who: string, key: Key, f: Figure) => results.set(`${who}|${key}`, [...(results.get(`${who}|${key}`) ?? []), f]);
const failures: string[] = [];

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

async function load(sys: ProcessSystem, name: string, job: Omit<LoadJob, "url" | "durationSeconds">): Promise<LoadSummary> {
  const full = { ...job, url: sys.url };
  if (warmup > 0) {
    const w = await runLoad({ ...full, durationSeconds: warmup });
    // A slow request may not complete within a short warm-up: only errors fail it.
    if (w.errors > 0 || w.timeouts > 0 || w.non2xx > 0) failures.push(describeFailure(`${sys.mode} ${name}`, "warm-up", w));
  }
  const r = await runLoad({ ...full, durationSeconds: duration });
  if (failed(r)) failures.push(describeFailure(`${sys.mode} ${name}`, "measured", r));
  return r;
}

/** Waits until every OUTGOING transfer accepted so far has COMPLETED, so no backlog is billed to the next scenario. */
async function drain(sys: ProcessSystem, accepted: number): Promise<void> {
  await eventually(
    `COMPLETED of all ${accepted} accepted transfers`,
    async () => {
      const res = await sys.call("GET", "/transactions?type=OUTGOING&status=COMPLETED&limit=1");
      return res.body?.totalCount >= accepted ? true : undefined;
    },
    600_000,
  );
}

async function idleFigures(sys: ProcessSystem, who: string): Promise<void> {
  // Settle after start-up, then 10 s of nothing: RSS at the end, CPU over the 10 s.
  await new Promise((r) => setTimeout(r, 5_000));
  const pids = sys.pids();
  const before = pids.map(cpuSeconds);
  await new Promise((r) => setTimeout(r, 10_000));
  const cpu = pids.reduce((sum, pid, i) => sum + cpuSeconds(pid) - before[i]!, 0);
  const rss = pids.map(rssMiB);
  note(who, "cpu-idle", { value: (cpu / 10) * 100 });
  note(who, "rss-idle", { value: rss.reduce((a, b) => a + b, 0) });
  note(who, "rss-max-process", { value: Math.max(...rss) });
}

async function measureMode(run: (typeof runs)[number], kafkaBrokers: string | undefined): Promise<void> {
  const { mode, label: who } = run;
  console.error(`[${who}] starting`);
  const sys = await startProcessSystem(mode, { databaseUrl, redisUrl, kafkaBrokers }, port, run.root);
  try {
    note(who, "launch", { value: sys.launchToReadyMs });
    await idleFigures(sys, who);
    console.error(`[${who}] ready in ${(sys.launchToReadyMs / 1000).toFixed(1)} s; setting up ${fundedCount} funded customers`);
    const fixtures = await setUpFixtures(sys, 1);
    const funded = await setUpFundedCustomers(sys, fundedCount - 1, `bench-${randomUUID().slice(0, 8)}`);
    const spreadBodies = [
      { accountId: fixtures.fiatAccountId, payeeId: fixtures.usdPayeeId },
      ...funded.map((f) => ({ accountId: f.accountId, payeeId: f.payeeId })),
    ].map((c) => JSON.stringify({ source: { accountId: c.accountId }, destination: { accountId: c.payeeId }, amount: 1 }));
    const headers = { authorization: sys.authorization, "content-type": "application/json" };
    const transfer = { method: "POST" as const, path: `/${API_VERSION}/transfer-out`, headers, uniqueIdempotencyKey: true };

    for (const [key, connections, bodies] of [
      ["transfer-spread-c1", 1, spreadBodies],
      ["transfer-spread-c10", 10, spreadBodies],
      ["transfer-hot-c10", 10, [spreadBodies[0]!]],
    ] as const) {
      console.error(`[${who}] ${key}`);
      const r = await load(sys, key, { ...transfer, bodies: [...bodies], connections });
      note(who, key, { value: r.requestsPerSecond, p99: r.latency.p99, mean: r.latency.mean });
      // Setup's, the warm-up's and the measured transfers: every one the ledger accepted must complete.
      const all = await sys.call("GET", "/transactions?type=OUTGOING&limit=1");
      await drain(sys, Number(all.body?.totalCount ?? 0));
    }

    for (const [key, connections] of [["config-c1", 1], ["config-c10", 10]] as const) {
      console.error(`[${who}] ${key}`);
      const r = await load(sys, key, { method: "GET", path: `/${API_VERSION}/config`, headers: { authorization: sys.authorization }, uniqueIdempotencyKey: false, connections });
      note(who, key, { value: r.requestsPerSecond, p99: r.latency.p99, mean: r.latency.mean });
    }

    console.error(`[${who}] quote-execute-c10`);
    const quote = JSON.stringify({
      source: { sourceType: "ACCOUNT", accountId: fixtures.fiatAccountId },
      destination: { destinationType: "ACCOUNT", accountId: fixtures.eurPayeeId },
      lockedCurrencySide: "SENDING",
      lockedCurrencyAmount: 10_000,
    });
    const q = await load(sys, "quote-execute-c10", {
      method: "POST",
      path: `/${API_VERSION}/quotes`,
      headers,
      body: quote,
      uniqueIdempotencyKey: true,
      connections: 10,
      then: { pathPrefix: `/${API_VERSION}/quotes/`, pathSuffix: "/execute" },
    });
    note(who, "quote-execute-c10", { value: q.requestsPerSecond / 2, p99: q.latency.p99, mean: q.latency.mean });

    if (webhookPayments > 0) {
      console.error(`[${who}] webhook latency under ${webhookPayments} payments`);
      const w = await measureWebhookLatency(sys, fixtures, { payments: webhookPayments, concurrency: 10 });
      if (w.stale > 0) failures.push(`${mode} webhooks: ${w.stale} webhooks of events from before the endpoint was set were delivered`);
      note(who, "webhook-p50", { value: w.all.p50 });
      note(who, "webhook-p99", { value: w.all.p99 });
      // Latency under a burst also depends on how fast the burst went in: a faster money path
      // queues more webhooks at once behind the same delivery rate.
      const stages = w.split ? `; event → enqueued p50/p99 ${w.split.enqueued.p50}/${w.split.enqueued.p99} ms, enqueued → POST ${w.split.posted.p50}/${w.split.posted.p99} ms` : "";
      console.error(
        `[${who}] webhooks: ${w.webhooks} in ${w.totalSeconds.toFixed(1)} s (${(w.webhooks / w.totalSeconds).toFixed(0)}/s); the ${w.payments} transfers went in within ${w.sendSeconds.toFixed(1)} s${stages}`,
      );
      const types = Object.entries(w.latencyByType).map(([t, p]) => `${t} ${w.byType[t]}× p50/p99 ${p.p50}/${p.p99} ms`);
      console.error(`[${who}] webhooks by type: ${types.join("; ")}`);
      if (w.split) {
        const h = w.split.hottest;
        console.error(
          `[${who}] webhooks: endpoint answered in p50/p99 ${w.split.answer.p50}/${w.split.answer.p99} ms` +
            (h ? `; the busiest resource (${h.deliveries} deliveries, in order) had p50/p99/max ${h.gap.p50}/${h.gap.p99}/${h.gap.max} ms between two` : ""),
        );
      }
      if (w.split?.failedAttempts.count) console.error(`[${who}] webhooks: ${w.split.failedAttempts.count} failed attempts (${w.split.failedAttempts.errors.join("; ")})`);
    }
  } finally {
    await sys.stop();
  }
}

async function measureAnchors(): Promise<void> {
  console.error("[anchor] pgbench tpcb-like, scale 10");
  const pgb = await preparePgbench(databaseUrl);
  try {
    for (const c of [1, 10]) {
      const r: PgbenchResult = await pgb.run(c, duration);
      note("anchor", c === 1 ? "pgbench-c1" : "pgbench-c10", { value: r.tps, mean: r.meanMs });
    }
  } finally {
    await pgb.drop();
  }
  for (const c of [1, 10]) {
    console.error(`[anchor] bare node:http c=${c}`);
    const r = await measureBareNode(c, duration, warmup);
    if (failed(r)) failures.push(describeFailure("bare node:http", `c=${c}`, r));
    note("anchor", c === 1 ? "node-c1" : "node-c10", { value: r.requestsPerSecond, p99: r.latency.p99, mean: r.latency.mean });
  }
}

const fmt = (n: number | undefined, digits = 0) =>
  n === undefined || Number.isNaN(n) ? "–" : n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
const med = (who: string, key: Key, field: keyof Figure = "value") => median((results.get(`${who}|${key}`) ?? []).map((f) => f[field]).filter((v): v is number => v !== undefined));

function printReport(machine: string): void {
  const cols = runs.map((r) => r.label);
  console.log(`Corridor compared with PostgreSQL and Node, median of ${rounds} round(s); ${duration} s per figure after ${warmup} s warm-up.`);
  console.log(machine);
  console.log("");
  console.log(`| figure | ${cols.map((m) => `${m}`).join(" | ")} | anchor | ${cols.map((m) => `ratio ${m}`).join(" | ")} | target (split) |`);
  console.log(`| --- | ${cols.map(() => "---:").join(" | ")} | --- | ${cols.map(() => "---:").join(" | ")} | --- |`);
  const rate = (label: string, key: Key, anchorKey: Key, anchorLabel: string, target: string) => {
    const a = med("anchor", anchorKey);
    const vals = cols.map((m) => med(m, key));
    console.log(
      `| ${label} | ${cols.map((m, i) => `${fmt(vals[i], 1)}/s, mean ${fmt(med(m, key, "mean"), 1)} ms, p99 ${fmt(med(m, key, "p99"))} ms`).join(" | ")} | ${anchorLabel} ${fmt(a, 0)}/s | ${vals.map((v) => fmt(v / a, 3)).join(" | ")} | ${target} |`,
    );
  };
  rate(`POST /transfer-out, ${fundedCount} customers, c=1`, "transfer-spread-c1", "pgbench-c1", "pgbench c=1", "mean ≤ 5 ms");
  rate(`POST /transfer-out, ${fundedCount} customers, c=10`, "transfer-spread-c10", "pgbench-c10", "pgbench c=10", "≥ 0.15, p99 ≤ 100 ms");
  rate("POST /transfer-out, one hot account, c=10", "transfer-hot-c10", "pgbench-c10", "pgbench c=10", "≥ 0.10");
  rate("GET /config, c=1", "config-c1", "node-c1", "node:http c=1", "–");
  rate("GET /config, c=10", "config-c10", "node-c10", "node:http c=10", "≥ 0.08, p99 ≤ 10 ms");
  rate("POST /quotes + execute (pairs), c=10", "quote-execute-c10", "pgbench-c10", "pgbench c=10", "–");
  const plain = (label: string, key: Key, unit: string, target: string, digits = 0) =>
    console.log(`| ${label} | ${cols.map((m) => `${fmt(med(m, key), digits)} ${unit}`).join(" | ")} | – | ${cols.map(() => "").join(" | ")} | ${target} |`);
  if (webhookPayments > 0) {
    plain(`webhook delivery p50 (${webhookPayments}-payment burst)`, "webhook-p50", "ms", "–");
    plain(`webhook delivery p99 (${webhookPayments}-payment burst)`, "webhook-p99", "ms", "≤ 2,000 ms");
  }
  plain("launch → ready", "launch", "ms", "embedded ≤ 3,000 ms");
  plain("idle RSS, all processes", "rss-idle", "MiB", "embedded ≤ 300 MiB", 0);
  plain("idle RSS, largest process", "rss-max-process", "MiB", "split ≤ 120 MiB each", 0);
  plain("idle CPU, all processes (% of one core)", "cpu-idle", "%", "split < 2 %", 1);
  if (cols.includes("split") && cols.includes("split-replicas")) {
    // Issue 28: with 2 replicas of every service, throughput no lower than with 1 on this machine.
    const ratio = (key: Key) => fmt(med("split-replicas", key) / med("split", key), 3);
    console.log("");
    console.log(
      `Replicas (2 of every service / 1, throughput): transfers ${fundedCount} customers c=1 ${ratio("transfer-spread-c1")}, c=10 ${ratio("transfer-spread-c10")}, hot account c=10 ${ratio("transfer-hot-c10")}, GET /config c=10 ${ratio("config-c10")}, quote + execute c=10 ${ratio("quote-execute-c10")} (target ≥ 1).`,
    );
  }
  console.log("");
  console.log(`Anchors (median): pgbench tpcb-like c=1 ${fmt(med("anchor", "pgbench-c1"))} TPS (mean ${fmt(med("anchor", "pgbench-c1", "mean"), 2)} ms), c=10 ${fmt(med("anchor", "pgbench-c10"))} TPS (mean ${fmt(med("anchor", "pgbench-c10", "mean"), 2)} ms); bare node:http c=1 ${fmt(med("anchor", "node-c1"))} req/s, c=10 ${fmt(med("anchor", "node-c10"))} req/s (p99 ${fmt(med("anchor", "node-c10", "p99"))} ms).`);
  console.log("");
  console.log("Every round (value; the table's medians are of these):");
  for (const [k, fs] of [...results.entries()].sort()) console.log(`- ${k}: ${fs.map((f) => fmt(f.value, 1)).join(", ")}`);
}

async function main(): Promise<number> {
  let kafkaBrokers = process.env.KAFKA_BROKERS || undefined;
  let startedBroker = false;
  if ((modes.includes("split") || modes.includes("split-replicas")) && !kafkaBrokers) {
    const already = await brokerAnswers(defaultPort);
    console.error(already ? "[kafka] reusing the broker on the test port" : "[kafka] starting the test broker");
    const b = await startBroker({ ownerPid: process.pid });
    kafkaBrokers = b.brokers;
    startedBroker = b.startedHere;
  }
  const machine = `Node ${process.version}, ${availableParallelism()} CPUs (${cpus()[0]?.model.trim() ?? "unknown"}), load average at start ${loadavg().map((l) => l.toFixed(2)).join(" ")}`;
  try {
    for (let round = 1; round <= rounds; round++) {
      console.error(`== round ${round} of ${rounds}`);
      await measureAnchors();
      for (const run of runs) {
        await measureMode(run, kafkaBrokers);
        // The anchors again after each system: the table's anchor is the median over the run, so
        // a machine whose load changes during the run still yields ratios to the same minutes.
        await measureAnchors();
      }
    }
  } finally {
    if (startedBroker) await stopBroker();
  }
  printReport(`${machine}; at the end ${loadavg().map((l) => l.toFixed(2)).join(" ")}`);
  if (failures.length) {
    console.error(`\nBENCHMARK FAILED: errors or non-2xx answers under load\n${failures.join("\n")}`);
    return 1;
  }
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error("BENCHMARK FAILED:", err);
    process.exit(1);
  },
);
