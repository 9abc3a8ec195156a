import { pollingWorker, type Logger, type PollingWorker } from "@corridor/kit";

export interface QuoteExpiryWorker extends PollingWorker {
  /** One pass: expires every due PENDING quote transaction (in batches); answers how many this pass moved. */
  runOnce(): Promise<number>;
}

/**
 * Runs the quote-expiry pass (domain/quote-expiry.ts) on the kit's polling loop: the first pass at
 * once, so a restarted ledger catches up before it waits, then every `pollMs`; a pass in progress
 * finishes on stop.
 */
export function quoteExpiryWorker(deps: { runOnce(): Promise<number>; log: Pick<Logger, "warn" | "debug">; pollMs: number }): QuoteExpiryWorker {
  const loop = pollingWorker({
    name: "quote-transaction-expiry",
    pass: deps.runOnce,
    pollMs: deps.pollMs,
    log: deps.log,
    onPass: (n) => {
      if (n > 0) deps.log.debug({ expired: n }, "expired due quote transactions");
    },
  });
  return Object.assign(loop, { runOnce: deps.runOnce });
}
