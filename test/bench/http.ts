import { randomUUID } from "node:crypto";
import { availableParallelism, cpus } from "node:os";
import { API_VERSION, eventually, setUpFixtures, startBenchSystem, type BenchSystem, type Fixtures } from "./http-system.js";
import { describeFailure, failed, intFromEnv, runLoad, type LoadJob, type LoadSummary } from "./load.js";
import { measureWebhookLatency, type WebhookLatencyResult } from "./webhook-latency.js";

/**
 * HTTP load benchmark (`npm run bench:http`): starts the embedded system in this process on
 * 127.0.0.1, sets up a sandbox platform through the public API, then drives each scenario with
 * autocannon from a worker thread and prints a markdown table. Any connection error, timeout or
 * non-2xx answer fails the run (exit 1): a fast error is not a result.
 *
 *   BENCH_DURATION     seconds measured per scenario (default 10)
 *   BENCH_CONNECTIONS  concurrent keep-alive connections (default 10)
 *   BENCH_WARMUP       seconds of unmeasured load before each scenario (default 2; 0 skips)
 *   BENCH_CUSTOMERS    customers on the platform for the list scenario (default 300)
 *   BENCH_SCENARIOS    comma-separated subset of scenario names (default all; `webhooks` is the
 *                      webhook delivery latency under a burst, see webhook-latency.ts)
 *   BENCH_WEBHOOK_PAYMENTS  transfers in the webhooks burst (default 600)
 *   DATABASE_URL       Postgres server (a fresh database is made and dropped); PGlite otherwise
 *   REDIS_URL          Redis for the auth cache and rate-limit counters; in-process otherwise
 */

const durationSeconds = intFromEnv("BENCH_DURATION", 10, 1);
const connections = intFromEnv("BENCH_CONNECTIONS", 10, 1);
const warmupSeconds = intFromEnv("BENCH_WARMUP", 2, 0);
const customers = intFromEnv("BENCH_CUSTOMERS", 300, 1);
const webhookPayments = intFromEnv("BENCH_WEBHOOK_PAYMENTS", 600, 1);

interface Scenario {
  name: string;
  /** What the row measures, printed under the table. */
  measures: string;
  method: "GET" | "POST";
  path: string;
  body?: unknown;
  uniqueIdempotencyKey?: boolean;
  /**
   * Each accepted request starts an OUTGOING transfer that completes through events (rail
   * instruction → sandbox → rail outcome → ledger). After the run, the runner waits until all of
   * them have completed, so that backlog is not billed to the next scenario, and reports how long
   * it took.
   */
  settles?: boolean;
}

function scenarios(f: Fixtures): Scenario[] {
  return [
    {
      name: "config",
      measures: "GET /config: rate limit, Basic auth (SHA-256 of the secret against the auth cache; auth-sessions is asked once per 30 s), one RPC to auth-sessions reading the platform config.",
      method: "GET",
      path: "/config",
    },
    {
      name: "customers",
      measures: `GET /customers?limit=20 on a platform with ${f.customers} customers: query validation and coercion, auth, one RPC to customers-kyc (a keyset page of 21 rows and a count, in one transaction), 20 customers mapped to JSON.`,
      method: "GET",
      path: "/customers?limit=20",
    },
    {
      name: "transfer-out",
      measures:
        "POST /transfer-out of 1 cent from a verified customer's funded USD account to their bank account, a new Idempotency-Key each time: the key claimed, both accounts read, the KYC gate (RPC to customers-kyc), then one ledger transaction locking the account, placing the hold and writing the transaction, its events (outbox) and the stored answer.",
      method: "POST",
      path: "/transfer-out",
      body: { source: { accountId: f.fiatAccountId }, destination: { accountId: f.usdPayeeId }, amount: 1 },
      uniqueIdempotencyKey: true,
      settles: true,
    },
    {
      name: "quotes",
      measures:
        "POST /quotes, 100.00 USD locked SENDING to the customer's EUR account: platform facts, both accounts read from the ledger over RPC, market rate and the fee and pricing model, then the ledger's PENDING quote transaction (KYC gate, its own transaction) and the quote row in quotes-fx.",
      method: "POST",
      path: "/quotes",
      body: { source: { sourceType: "ACCOUNT", accountId: f.fiatAccountId }, destination: { destinationType: "ACCOUNT", accountId: f.eurPayeeId }, lockedCurrencySide: "SENDING", lockedCurrencyAmount: 10_000 },
    },
  ];
}

function jobFor(sys: BenchSystem, s: Scenario, seconds: number): LoadJob {
  return {
    url: sys.url,
    method: s.method,
    path: `/${API_VERSION}${s.path}`,
    headers: { authorization: sys.authorization, ...(s.body === undefined ? {} : { "content-type": "application/json" }) },
    body: s.body === undefined ? undefined : JSON.stringify(s.body),
    uniqueIdempotencyKey: s.uniqueIdempotencyKey ?? false,
    connections,
    durationSeconds: seconds,
  };
}

const fmt = (n: number, digits = 0) => n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });

async function main(): Promise<number> {
  const wanted = process.env.BENCH_SCENARIOS?.split(",").map((s) => s.trim()).filter(Boolean);
  const setupStarted = Date.now();
  const sys = await startBenchSystem();
  const failures: string[] = [];
  const rows: { s: Scenario; r: LoadSummary; drainSeconds?: number }[] = [];
  let webhooks: WebhookLatencyResult | undefined;
  try {
    const fixtures = await setUpFixtures(sys, customers);
    const all = scenarios(fixtures);
    const unknown = (wanted ?? []).filter((w) => w !== "webhooks" && !all.some((s) => s.name === w));
    if (unknown.length) throw new Error(`unknown BENCH_SCENARIOS ${unknown.join(", ")}; known: ${[...all.map((s) => s.name), "webhooks"].join(", ")}`);
    const chosen = wanted ? all.filter((s) => wanted.includes(s.name)) : all;
    // Each scenario is checked once by hand first, so a broken setup fails before any load.
    let transfersAccepted = fixtures.transfersAccepted;
    for (const s of chosen) {
      if (s.settles) transfersAccepted++;
      const res = await sys.call(s.method, s.path, s.body, s.uniqueIdempotencyKey ? { "idempotency-key": randomUUID() } : {});
      if (res.status < 200 || res.status >= 300) throw new Error(`${s.name}: ${s.method} ${s.path} answered ${res.status}: ${JSON.stringify(res.body)}`);
    }
    console.error(`setup done in ${((Date.now() - setupStarted) / 1000).toFixed(1)} s (${sys.database}, cache ${sys.cache}, ${customers} customers)`);

    for (const s of chosen) {
      if (warmupSeconds > 0) {
        console.error(`${s.name}: warming up ${warmupSeconds} s`);
        const w = await runLoad(jobFor(sys, s, warmupSeconds));
        if (failed(w)) failures.push(describeFailure(s.name, "warm-up", w));
        if (s.settles) transfersAccepted += w.ok;
      }
      console.error(`${s.name}: measuring ${durationSeconds} s with ${connections} connections`);
      const r = await runLoad(jobFor(sys, s, durationSeconds));
      if (failed(r)) failures.push(describeFailure(s.name, "measured", r));
      let drainSeconds: number | undefined;
      if (s.settles) {
        transfersAccepted += r.ok;
        const stopped = Date.now();
        await eventually(
          `COMPLETED of all ${transfersAccepted} accepted transfers`,
          async () => {
            const res = await sys.call("GET", "/transactions?type=OUTGOING&status=COMPLETED&limit=1");
            return res.body?.totalCount >= transfersAccepted ? true : undefined;
          },
          300_000,
        );
        drainSeconds = (Date.now() - stopped) / 1000;
        console.error(`${s.name}: all ${transfersAccepted} transfers COMPLETED ${drainSeconds.toFixed(1)} s after the load stopped`);
      }
      rows.push({ s, r, drainSeconds });
    }
    if (!wanted || wanted.includes("webhooks")) {
      webhooks = await measureWebhookLatency(sys, fixtures, { payments: webhookPayments, concurrency: connections });
    }
  } finally {
    await sys.stop();
  }

  const cpu = cpus()[0]?.model.trim() ?? "unknown CPU";
  console.log(`HTTP benchmark: ${sys.database}, auth cache and rate limit ${sys.cache}; ${connections} connections, ${durationSeconds} s per scenario after ${warmupSeconds} s warm-up`);
  console.log(`Node ${process.version}, ${availableParallelism()} CPUs (${cpu})`);
  if (rows.length) {
    console.log("Latencies are whole milliseconds (autocannon's resolution).");
    console.log("");
    console.log("| scenario | req/s | p50 ms | p97.5 ms | p99 ms | max ms | requests | errors (incl. timeouts) | non-2xx |");
    console.log("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
  }
  for (const { s, r } of rows) {
    console.log(
      `| ${s.method} ${s.path} | ${fmt(r.requestsPerSecond, 1)} | ${fmt(r.latency.p50)} | ${fmt(r.latency.p97_5)} | ${fmt(r.latency.p99)} | ${fmt(r.latency.max)} | ${fmt(r.requests)} | ${r.errors} | ${r.non2xx} |`,
    );
  }
  if (rows.length) console.log("");
  for (const { s } of rows) console.log(`- ${s.name}: ${s.measures}`);
  for (const { s, drainSeconds } of rows) {
    if (drainSeconds !== undefined) {
      console.log(`- ${s.name}, after the load: every accepted transfer reached COMPLETED (through the outbox, the sandbox rail and back) ${drainSeconds.toFixed(1)} s after the last request.`);
    }
  }

  if (webhooks) {
    const w = webhooks;
    const ms = (n: number) => fmt(n, 0);
    const x = (n: number) => `${fmt(n / w.anchor.p50, 0)}×`;
    console.log("");
    console.log(
      `Webhook delivery under a burst of ${fmt(w.payments)} transfers (${w.concurrency} in flight; posted in ${w.sendSeconds.toFixed(1)} s; last webhook ${w.totalSeconds.toFixed(1)} s after the first transfer): ${fmt(w.webhooks)} webhooks (${Object.entries(w.byType).map(([t, n]) => `${t} ${n}`).join(", ")}), ${w.stale} of events from before the endpoint was set.`,
    );
    console.log("Latency = received at the loopback receiver − the event's occurred time; anchor = a bare loopback POST round trip (median of 500) in the same run.");
    console.log("");
    console.log("| measure | p50 | p90 | p99 | max | p50 ÷ anchor | p99 ÷ anchor |");
    console.log("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    console.log(`| all webhooks, ms | ${ms(w.all.p50)} | ${ms(w.all.p90)} | ${ms(w.all.p99)} | ${ms(w.all.max)} | ${x(w.all.p50)} | ${x(w.all.p99)} |`);
    console.log(`| OUTGOING_PAYMENT_COMPLETED, ms | ${ms(w.completed.p50)} | ${ms(w.completed.p90)} | ${ms(w.completed.p99)} | ${ms(w.completed.max)} | ${x(w.completed.p50)} | ${x(w.completed.p99)} |`);
    if (w.split) {
      console.log(`| of which event → enqueued by notifications, ms | ${ms(w.split.enqueued.p50)} | ${ms(w.split.enqueued.p90)} | ${ms(w.split.enqueued.p99)} | ${ms(w.split.enqueued.max)} | | |`);
      console.log(`| of which enqueued → first POST (delivery worker), ms | ${ms(w.split.posted.p50)} | ${ms(w.split.posted.p90)} | ${ms(w.split.posted.p99)} | ${ms(w.split.posted.max)} | | |`);
    }
    console.log(`| anchor: loopback POST round trip, ms | ${fmt(w.anchor.p50, 2)} | ${fmt(w.anchor.p90, 2)} | ${fmt(w.anchor.p99, 2)} | ${fmt(w.anchor.max, 2)} | 1× | |`);
    if (w.stale > 0) failures.push(`webhooks: ${w.stale} webhooks of events from before the endpoint was set were delivered`);
  }

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
