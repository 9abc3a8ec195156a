import { pollingWorker, type BackgroundWorker, type Logger } from "@corridor/kit";
import type { IncomingPayments } from "../domain/incoming.js";

/**
 * Fails acknowledged (202) incoming payments whose approval window has passed on their platform's
 * sandbox clock (FAILED PAYMENT_APPROVAL_TIMED_OUT), every `pollMs`. Deadlines are rows of
 * incoming_approvals, so a restart picks them up again.
 */
export function approvalTimeoutWorker(incoming: IncomingPayments<any>, log: Pick<Logger, "warn" | "debug">, pollMs: number): BackgroundWorker {
  return pollingWorker({ name: "incoming-approval-timeout", pass: () => incoming.expireDue(100), pollMs, log });
}
