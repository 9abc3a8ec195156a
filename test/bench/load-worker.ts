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
  /** Request bodies sent in turn (the first request's `body` is then ignored): spreads load over many accounts. */
  bodies?: string[];
  /**
   * A second request after each answer to the first, on the same connection: POST
   * `${then.pathPrefix}<id of the first answer>${then.pathSuffix}` (quote → execute). Requests
   * count both; a pair is two.
   */
  then?: { pathPrefix: string; pathSuffix: string };
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
let nextBody = 0;

const noteFailure = (status: number, body: string) => {
  if ((status < 200 || status >= 300) && samples.length < 3) samples.push(`${status} ${body.slice(0, 500)}`);
};
const withKey = (req: autocannon.Request): autocannon.Request =>
  job.uniqueIdempotencyKey ? { ...req, headers: { ...req.headers, "idempotency-key": randomUUID() } } : req;

type Context = Record<string, unknown>;
/** The first request: a fresh key, the next body in turn; with `then`, the answer's id is kept for the second. */
const first: autocannon.Request = {
  method: job.method,
  path: job.path,
  headers: job.headers,
  body: job.body,
  ...(job.uniqueIdempotencyKey || job.bodies
    ? {
        setupRequest: (req: autocannon.Request) => {
          const keyed = withKey(req);
          return job.bodies ? { ...keyed, body: job.bodies[nextBody++ % job.bodies.length] } : keyed;
        },
      }
    : {}),
  onResponse: (status: number, body: string, context: Context) => {
    noteFailure(status, body);
    if (job.then) {
      try {
        context.id = status < 300 ? (JSON.parse(body) as { id?: string }).id : undefined;
      } catch {
        context.id = undefined;
      }
    }
  },
} as autocannon.Request;
const second: autocannon.Request | undefined = job.then && ({
  method: "POST",
  path: job.path,
  // No body: a route without one refuses one.
  headers: Object.fromEntries(Object.entries(job.headers).filter(([k]) => k.toLowerCase() !== "content-type")),
  setupRequest: (req: autocannon.Request, context: Context) => withKey({ ...req, path: `${job.then!.pathPrefix}${String(context.id ?? "missing")}${job.then!.pathSuffix}` }),
  onResponse: (status: number, body: string) => noteFailure(status, body),
} as autocannon.Request);

const options: autocannon.Options = {
  url: job.url,
  connections: job.connections,
  duration: job.durationSeconds,
  requests: second ? [first, second] : [first],
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
