import { randomUUID } from "node:crypto";
import { parentPort, workerData } from "node:worker_threads";
import autocannon from "autocannon";

/**
 * One autocannon run, in a worker thread: the system under test owns the main thread's event
 * loop, so the load generator must not share it (it would slow the server down and be slowed by
 * it). Receives a LoadJob, answers a LoadSummary.
 */

export interface LoadJob {
  url: string;
  method: "GET" | "POST";
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** A fresh Idempotency-Key on every request (a replay would measure the idempotency cache instead). */
  uniqueIdempotencyKey: boolean;
  connections: number;
  durationSeconds: number;
}

export interface LoadSummary {
  requests: number;
  requestsPerSecond: number;
  latency: { p50: number; p97_5: number; p99: number; max: number; mean: number };
  errors: number;
  timeouts: number;
  non2xx: number;
  /** Answers with a 2xx status. */
  ok: number;
  statusCodes: Record<string, number>;
  /** Up to three non-2xx answers, to say why a run failed. */
  samples: string[];
}

const job = workerData as LoadJob;
const samples: string[] = [];

const options: autocannon.Options = {
  url: job.url,
  connections: job.connections,
  duration: job.durationSeconds,
  requests: [
    {
      method: job.method,
      path: job.path,
      headers: job.headers,
      body: job.body,
      // autocannon takes a present-but-undefined setupRequest as a function to call, so the key is only set when used.
      ...(job.uniqueIdempotencyKey ? { setupRequest: (req: autocannon.Request) => ({ ...req, headers: { ...req.headers, "idempotency-key": randomUUID() } }) } : {}),
      onResponse: (status: number, body: string) => {
        if ((status < 200 || status >= 300) && samples.length < 3) samples.push(`${status} ${body.slice(0, 500)}`);
      },
    },
  ],
};

// Off the main thread autocannon answers its raw per-worker result (histograms still encoded, as
// its own workers mode sends them back) and leaves aggregation to the caller: its exported
// aggregateResult (not in @types/autocannon) turns that into the usual Result. Requests per
// second are then completed requests over the run's duration.
type Aggregate = (results: unknown[], opts: autocannon.Options) => autocannon.Result;
const raw = (await autocannon(options)) as unknown as { duration: number };
const result = (autocannon as unknown as { aggregateResult: Aggregate }).aggregateResult([raw], options);

const statusCodes: Record<string, number> = {};
for (const [code, stat] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = stat.count ?? 0;

const summary: LoadSummary = {
  requests: result.requests.total,
  requestsPerSecond: raw.duration > 0 ? result.requests.total / raw.duration : 0,
  latency: { p50: result.latency.p50, p97_5: result.latency.p97_5, p99: result.latency.p99, max: result.latency.max, mean: result.latency.mean },
  errors: result.errors,
  timeouts: result.timeouts,
  non2xx: result.non2xx,
  ok: Object.entries(statusCodes).reduce((n, [code, count]) => (code.startsWith("2") ? n + count : n), 0),
  statusCodes,
  samples,
};
parentPort!.postMessage(summary);
