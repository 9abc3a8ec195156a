import type { BackgroundWorker, Logger } from "@corridor/kit";
import type { QuoteLifecycle } from "../domain/quote-lifecycle.js";

/** Expires PENDING quotes past expiresAt (quote and ledger transaction → EXPIRED) every `pollMs`. */
export function expiryWorker(quotes: QuoteLifecycle, log: Pick<Logger, "warn" | "debug">, pollMs: number): BackgroundWorker {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = true;
  const tick = () => {
    running = quotes
      .expireDue(100)
      .then((r) => {
        if (r.failed > 0) log.warn({ failed: r.failed }, "some due quotes could not be expired (retried next tick)");
      })
      .catch((err) => log.warn({ err }, "quote expiry tick failed"))
      .finally(() => {
        running = undefined;
        if (!stopped) timer = setTimeout(tick, pollMs);
      });
  };
  return {
    name: "quote-expiry",
    start() {
      stopped = false;
      tick(); // the first pass at once (a restarted service catches up before it waits)
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
