import type { BackgroundWorker, Logger } from "@corridor/kit";
import type { Recovery } from "../domain/recovery.js";
import { pollingWorker } from "./loop.js";

/** Retries executions whose outcome was never recorded (domain/recovery.ts). */
export function recoveryWorker(recovery: Recovery, opts: { pollMs: number; batchSize: number; log: Pick<Logger, "warn"> }): BackgroundWorker {
  return pollingWorker("agent-execution-recovery", () => recovery.recoverStale(opts.batchSize), opts.pollMs, opts.log);
}
