import { pollingWorker, type BackgroundWorker, type Logger } from "@corridor/kit";
import type { QuoteLifecycle } from "../domain/quote-lifecycle.js";

/**
 * Every `pollMs`: finishes quote drafts whose creating request is over (the ledger transaction
 * and its quote appear together: see QuoteLifecycle.finishDrafts), then expires PENDING quotes
 * past expiresAt (quote and ledger transaction → EXPIRED).
 */
export function expiryWorker(quotes: QuoteLifecycle, log: Pick<Logger, "warn" | "debug">, pollMs: number): BackgroundWorker {
  return pollingWorker({
    name: "quote-expiry",
    pass: async () => ({ drafts: await quotes.finishDrafts(100), expiry: await quotes.expireDue(100) }),
    pollMs,
    log,
    onPass: (r) => {
      if (r.drafts.finished > 0 || r.drafts.dropped > 0) log.warn({ ...r.drafts }, "finished quote drafts an interrupted request left");
      if (r.drafts.failed > 0) log.warn({ failed: r.drafts.failed }, "some quote drafts could not be finished (retried next tick)");
      if (r.expiry.failed > 0) log.warn({ failed: r.expiry.failed }, "some due quotes could not be expired (retried next tick)");
    },
  });
}
