import { pollingWorker, type BackgroundWorker, type Logger } from "@corridor/kit";
import type { Expiry } from "../domain/expiry.js";

/** Fails PENDING_APPROVAL quote executions whose quote expired (domain/expiry.ts). */
export function expiryWorker(expiry: Expiry, opts: { pollMs: number; batchSize: number; log: Pick<Logger, "warn"> }): BackgroundWorker {
  return pollingWorker({ name: "agent-action-expiry", pass: () => expiry.expireDue(opts.batchSize), pollMs: opts.pollMs, log: opts.log });
}
