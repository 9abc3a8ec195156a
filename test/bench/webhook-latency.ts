import { randomUUID } from "node:crypto";
import { Worker } from "node:worker_threads";
import pg from "pg";
import { eventually, type BenchSystem, type Fixtures } from "./http-system.js";

/**
 * Webhook delivery latency under a burst of payments (issue "Hardening", defect 5), part of
 * `npm run bench:http` as the `webhooks` scenario.
 *
 * A loopback receiver runs in a worker thread (a platform's server is another process; it must not
 * queue behind the system on the main thread) and notes, for each webhook, when it arrived. The
 * platform's endpoint is set to it just before the burst, so the events of the earlier scenarios
 * are not released to it (an endpoint receives the events that occur after it is set) — any that
 * arrive are counted as stale. Then `payments` transfers are posted at once (`concurrency` in
 * flight) and the runner waits until the receiver has OUTGOING_PAYMENT_COMPLETED for every one and
 * nothing more arrives for 2 s.
 *
 * Latency of a webhook = arrival at the receiver − the envelope's `timestamp` (when the ledger
 * committed the event), both Date.now() on this machine, 1 ms resolution. It spans the ledger's
 * outbox relay, the bus, the notifications consumer, the delivery worker and the POST.
 *
 * Anchor, measured in the same run before the burst: a bare HTTP POST round trip from this thread
 * to the same receiver (fetch with keep-alive, a 1 KiB JSON body, as the sender posts), median of
 * 500 after 50 of warm-up. The latencies are also given as multiples of it, to compare machines.
 */

export interface WebhookLatencyResult {
  payments: number;
  concurrency: number;
  /** How long posting the burst took (every transfer answered 201). */
  sendSeconds: number;
  /** From the first transfer posted to the last webhook received. */
  totalSeconds: number;
  webhooks: number;
  byType: Record<string, number>;
  /** Latency per webhook type (the one hot account's balance updates form one ordered chain). */
  latencyByType: Record<string, Percentiles>;
  /** Webhooks of events that occurred before the endpoint was set (should be 0). */
  stale: number;
  all: Percentiles;
  completed: Percentiles;
  anchor: Percentiles;
  /**
   * With Postgres, the latency split from notifications' own tables: event → enqueued (the
   * producer's outbox relay, the bus, the notifications consumer) and enqueued → first POST
   * (the delivery worker). PGlite lives inside the process and is not read from outside.
   */
  split?: {
    enqueued: Percentiles;
    posted: Percentiles;
    failedAttempts: { count: number; errors: string[] };
    /** How long the endpoint took to answer (webhook_deliveries.latency_ms), ms. */
    answer: Percentiles;
    /** The resource with the most webhooks (the hot account): its deliveries and the time between two of them (its ordered chain), ms. */
    hottest?: { resource: string; deliveries: number; gap: Percentiles };
  };
}

export interface Percentiles {
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

interface Arrival {
  type: string;
  resource: string;
  timestamp: string;
  receivedAt: number;
}

/** The receiver: answers 200 to everything; reports each /hooks envelope to the main thread. */
const RECEIVER = `
const { parentPort } = require("node:worker_threads");
const http = require("node:http");
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const receivedAt = Date.now();
    res.writeHead(200, { "content-type": "text/plain" }).end("ok");
    if (req.url !== "/hooks") return;
    try {
      const e = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      parentPort.postMessage({ kind: "hook", type: e.type, resource: (e.data && (e.data.id || e.data.code)) || "", timestamp: e.timestamp, receivedAt });
    } catch {}
  });
});
server.keepAliveTimeout = 60000;
server.listen(0, "127.0.0.1", () => parentPort.postMessage({ kind: "ready", port: server.address().port }));
parentPort.on("message", (m) => { if (m === "close") server.close(() => parentPort.close()); });
`;

function percentiles(values: number[]): Percentiles {
  const s = [...values].sort((a, b) => a - b);
  const at = (q: number) => (s.length ? s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]! : NaN);
  return { p50: at(0.5), p90: at(0.9), p99: at(0.99), max: s.length ? s[s.length - 1]! : NaN };
}

async function startReceiver() {
  const worker = new Worker(RECEIVER, { eval: true });
  const arrivals: Arrival[] = [];
  let lastArrival = Date.now();
  const port = await new Promise<number>((resolve, reject) => {
    worker.on("message", (m: { kind: string; port?: number } & Arrival) => {
      if (m.kind === "ready") resolve(m.port!);
      else if (m.kind === "hook") {
        arrivals.push({ type: m.type, resource: m.resource, timestamp: m.timestamp, receivedAt: m.receivedAt });
        lastArrival = Date.now();
      }
    });
    worker.once("error", reject);
  });
  return {
    url: `http://127.0.0.1:${port}`,
    arrivals,
    quietFor: () => Date.now() - lastArrival,
    close: () => new Promise<void>((resolve) => {
      worker.once("exit", () => resolve());
      worker.postMessage("close");
      setTimeout(() => void worker.terminate(), 2_000).unref();
    }),
  };
}

/** Round trips of a bare POST to the receiver: the anchor. */
async function anchorRoundTrips(url: string): Promise<Percentiles> {
  const body = JSON.stringify({ id: `Webhook:${randomUUID()}`, type: "ANCHOR", timestamp: new Date().toISOString(), data: { pad: "x".repeat(900) } });
  const times: number[] = [];
  for (let i = 0; i < 550; i++) {
    const t0 = performance.now();
    const res = await fetch(`${url}/anchor`, { method: "POST", headers: { "content-type": "application/json" }, body });
    await res.text();
    if (i >= 50) times.push(performance.now() - t0);
  }
  return percentiles(times);
}

export async function measureWebhookLatency(sys: BenchSystem, f: Fixtures, opts: { payments: number; concurrency: number }): Promise<WebhookLatencyResult> {
  const receiver = await startReceiver();
  try {
    const anchor = await anchorRoundTrips(receiver.url);

    const endpoint = `${receiver.url}/hooks`;
    const endpointSetAt = Date.now();
    const patched = await sys.call("PATCH", "/config", { webhookEndpoint: endpoint });
    if (patched.status !== 200) throw new Error(`webhooks: PATCH /config answered ${patched.status}: ${JSON.stringify(patched.body)}`);
    // TEST reads the config from auth-sessions, so notifications holds the endpoint after it.
    await eventually("a delivered TEST webhook", async () => {
      const res = await sys.call("POST", "/sandbox/webhooks/test");
      return res.status === 200 && res.body?.response_status === 200 ? true : undefined;
    });

    console.error(`webhooks: anchor p50 ${anchor.p50.toFixed(2)} ms; posting ${opts.payments} transfers, ${opts.concurrency} at a time`);
    const started = Date.now();
    const ids: string[] = [];
    let next = 0;
    const sender = async () => {
      while (next < opts.payments) {
        next++;
        const res = await sys.call(
          "POST",
          "/transfer-out",
          { source: { accountId: f.fiatAccountId }, destination: { accountId: f.usdPayeeId }, amount: 1 },
          { "idempotency-key": randomUUID() },
        );
        if (res.status !== 201) throw new Error(`webhooks: POST /transfer-out answered ${res.status}: ${JSON.stringify(res.body)}`);
        ids.push(res.body.id as string);
      }
    };
    await Promise.all(Array.from({ length: opts.concurrency }, sender));
    const sendSeconds = (Date.now() - started) / 1000;

    const wanted = new Set(ids);
    await eventually(
      `OUTGOING_PAYMENT_COMPLETED webhooks for all ${opts.payments} transfers`,
      async () => {
        const done = new Set(receiver.arrivals.filter((a) => a.type === "OUTGOING_PAYMENT_COMPLETED" && wanted.has(a.resource)).map((a) => a.resource));
        return done.size >= wanted.size ? true : undefined;
      },
      300_000,
    );
    // Balance updates and the like may still be on their way.
    await eventually("2 s without a webhook", async () => (receiver.quietFor() >= 2_000 ? true : undefined), 120_000);

    // The TEST webhook above is not an event.
    const events = receiver.arrivals.filter((a) => a.type !== "TEST");
    const fresh = events.filter((a) => Date.parse(a.timestamp) >= endpointSetAt);
    const split = sys.databaseUrl ? await splitFromTables(sys.databaseUrl, new Date(endpointSetAt)) : undefined;
    const latency = (a: Arrival) => a.receivedAt - Date.parse(a.timestamp);
    const byType: Record<string, number> = {};
    for (const a of fresh) byType[a.type] = (byType[a.type] ?? 0) + 1;
    const latencyByType = Object.fromEntries(Object.keys(byType).map((t) => [t, percentiles(fresh.filter((a) => a.type === t).map(latency))]));
    const last = Math.max(...fresh.map((a) => a.receivedAt));
    return {
      payments: opts.payments,
      concurrency: opts.concurrency,
      sendSeconds,
      totalSeconds: (last - started) / 1000,
      webhooks: fresh.length,
      byType,
      latencyByType,
      stale: events.length - fresh.length,
      all: percentiles(fresh.map(latency)),
      completed: percentiles(fresh.filter((a) => a.type === "OUTGOING_PAYMENT_COMPLETED" && wanted.has(a.resource)).map(latency)),
      anchor,
      split,
    };
  } finally {
    await receiver.close();
  }
}

/** Enqueue lag and delivery wait per webhook, from notifications' queue and attempts (ms). */
async function splitFromTables(databaseUrl: string, since: Date): Promise<NonNullable<WebhookLatencyResult["split"]>> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ enqueued: number; posted: number }>(
      `select extract(epoch from q.created_at - q.occurred_at) * 1000 as enqueued,
              extract(epoch from (select min(d.attempted_at) from notifications.webhook_deliveries d where d.webhook_id = q.webhook_id) - q.created_at) * 1000 as posted
         from notifications.webhook_queue q
        where q.status = 'DELIVERED' and q.occurred_at >= $1`,
      [since],
    );
    // A failed attempt holds the webhooks of its resource behind it until its retry.
    const failed = await client.query<{ n: string; error: string | null; response_status: number | null }>(
      `select count(*) as n, error, response_status from notifications.webhook_deliveries
        where not delivered and attempted_at >= $1 group by error, response_status order by count(*) desc limit 3`,
      [since],
    );
    const answers = await client.query<{ ms: number }>(`select latency_ms as ms from notifications.webhook_deliveries where attempted_at >= $1 and latency_ms is not null`, [since]);
    const chain = await client.query<{ resource_key: string; gap: number }>(
      `with hot as (select resource_key from notifications.webhook_queue where occurred_at >= $1 and resource_key is not null
                     group by resource_key order by count(*) desc limit 1),
            d as (select q.resource_key, d.attempted_at,
                         lag(d.attempted_at) over (order by d.attempted_at) as prev
                    from notifications.webhook_deliveries d join notifications.webhook_queue q on q.webhook_id = d.webhook_id
                   where q.resource_key = (select resource_key from hot) and d.attempted_at >= $1)
       select resource_key, extract(epoch from attempted_at - prev) * 1000 as gap from d where prev is not null`,
      [since],
    );
    return {
      answer: percentiles(answers.rows.map((r) => Number(r.ms))),
      hottest: chain.rows.length
        ? { resource: chain.rows[0]!.resource_key, deliveries: chain.rows.length + 1, gap: percentiles(chain.rows.map((r) => Number(r.gap))) }
        : undefined,
      enqueued: percentiles(rows.map((r) => Number(r.enqueued))),
      posted: percentiles(rows.map((r) => Number(r.posted))),
      failedAttempts: {
        count: failed.rows.reduce((sum, r) => sum + Number(r.n), 0),
        errors: failed.rows.map((r) => `${r.n}× ${r.error ?? `status ${r.response_status}`}`),
      },
    };
  } finally {
    await client.end();
  }
}
