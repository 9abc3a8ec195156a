import type { BackgroundWorker, Logger } from "@corridor/kit";
import type { Expiry } from "../domain/expiry.js";
import { pollingWorker } from "./loop.js";

/** Fails PENDING_APPROVAL quote executions whose quote expired (domain/expiry.ts). */
export function expiryWorker(expiry: Expiry, opts: { pollMs: number; batchSize: number; log: Pick<Logger, "warn"> }): BackgroundWorker {
  return pollingWorker("agent-action-expiry", () => expiry.expireDue(opts.batchSize), opts.pollMs, opts.log);
}
