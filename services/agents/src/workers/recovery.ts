import { pollingWorker, type BackgroundWorker, type Logger } from "@corridor/kit";
import type { Recovery } from "../domain/recovery.js";

/** Retries executions whose outcome was never recorded (domain/recovery.ts). */
export function recoveryWorker(recovery: Recovery, opts: { pollMs: number; batchSize: number; log: Pick<Logger, "warn"> }): BackgroundWorker {
  return pollingWorker({ name: "agent-execution-recovery", pass: () => recovery.recoverStale(opts.batchSize), pollMs: opts.pollMs, log: opts.log });
}
