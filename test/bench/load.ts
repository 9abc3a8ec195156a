import { Worker } from "node:worker_threads";
import type { LoadJob, LoadSummary } from "./load-worker.js";

export type { LoadJob, LoadSummary } from "./load-worker.js";

/**
 * Runs load-worker.ts (autocannon) in a worker thread, with tsx's loader, which workers do not
 * inherit: the load generator never shares an event loop with the system under test.
 */
export function runLoad(job: LoadJob): Promise<LoadSummary> {
  const tsx = import.meta.resolve("tsx/esm/api");
  const entry = new URL("./load-worker.ts", import.meta.url).href;
  const code = `import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(entry)}); });`;
  return new Promise((resolve, reject) => {
    const worker = new Worker(code, { eval: true, workerData: job });
    let answered = false;
    worker.once("message", (summary: LoadSummary) => {
      answered = true;
      resolve(summary);
    });
    worker.once("error", reject);
    worker.once("exit", (code) => {
      if (!answered) reject(new Error(`load worker exited with code ${code} before reporting`));
    });
  });
}

/** Any connection error, timeout or non-2xx answer fails a benchmark: a fast error is not a result. */
export const failed = (r: LoadSummary) => r.errors > 0 || r.timeouts > 0 || r.non2xx > 0 || r.requests === 0;

export function describeFailure(name: string, phase: string, r: LoadSummary): string {
  return [
    `${name} (${phase}): ${r.requests} requests, ${r.errors} errors, ${r.timeouts} timeouts, ${r.non2xx} non-2xx; status codes ${JSON.stringify(r.statusCodes)}`,
    ...r.samples.map((s) => `  e.g. ${s}`),
  ].join("\n");
}

/** A whole-number benchmark setting from the environment, at least `min`; `fallback` when unset. */
export function intFromEnv(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be an integer ≥ ${min}, got ${JSON.stringify(raw)}`);
  return n;
}
