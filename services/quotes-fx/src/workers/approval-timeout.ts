import type { BackgroundWorker, Logger } from "@corridor/kit";
import type { IncomingPayments } from "../domain/incoming.js";

/**
 * Fails acknowledged (202) incoming payments whose approval window has passed on their platform's
 * sandbox clock (FAILED PAYMENT_APPROVAL_TIMED_OUT), every `pollMs`. Deadlines are rows of
 * incoming_approvals, so a restart picks them up again.
 */
export function approvalTimeoutWorker(incoming: IncomingPayments<any>, log: Pick<Logger, "warn" | "debug">, pollMs: number): BackgroundWorker {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = true;
  const tick = () => {
    running = incoming
      .expireDue(100)
      .then(() => undefined)
      .catch((err) => log.warn({ err }, "incoming approval timeout tick failed"))
      .finally(() => {
        running = undefined;
        if (!stopped) timer = setTimeout(tick, pollMs);
      });
  };
  return {
    name: "incoming-approval-timeout",
    start() {
      stopped = false;
      tick();
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
