import { pollingWorker, type BackgroundWorker, type Logger } from "@corridor/kit";
import type { QuoteLifecycle } from "../domain/quote-lifecycle.js";

/** Expires PENDING quotes past expiresAt (quote and ledger transaction → EXPIRED) every `pollMs`. */
export function expiryWorker(quotes: QuoteLifecycle, log: Pick<Logger, "warn" | "debug">, pollMs: number): BackgroundWorker {
  return pollingWorker({
    name: "quote-expiry",
    pass: () => quotes.expireDue(100),
    pollMs,
    log,
    onPass: (r) => {
      if (r.failed > 0) log.warn({ failed: r.failed }, "some due quotes could not be expired (retried next tick)");
    },
  });
}
