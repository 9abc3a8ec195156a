import { pollingWorker, type Logger, type PollingWorker } from "@corridor/kit";
import type { IncomingPayments } from "../domain/incoming.js";

/**
 * Fails acknowledged (202) incoming payments whose approval window has passed on their platform's
 * sandbox clock (FAILED PAYMENT_APPROVAL_TIMED_OUT). Deadlines are rows of incoming_approvals, so a
 * restart picks them up again. While a payment awaits its platform it looks every `pollMs` (the
 * window is seconds, and a sandbox clock advance must show soon); while none does it rests for
 * `idlePollMs`, and `wake()` (a new row committed by this process's request path) ends the rest at
 * once. The rest only delays rows this process did not write: a guard row recorded from the
 * ledger's event after a crash, or one of another replica that stopped before its worker saw it.
 */
export function approvalTimeoutWorker(
  incoming: Pick<IncomingPayments<any>, "expireDue">,
  log: Pick<Logger, "warn" | "debug">,
  timing: { pollMs: number; idlePollMs: number },
): PollingWorker {
  return pollingWorker({
    name: "incoming-approval-timeout",
    pass: () => incoming.expireDue(100),
    pollMs: timing.pollMs,
    nextPollMs: (r) => (r.waiting > 0 ? timing.pollMs : Math.max(timing.pollMs, timing.idlePollMs)),
    log,
  });
}
