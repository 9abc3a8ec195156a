import { pollingWorker, type Clock, type Logger, type PollingWorker } from "@corridor/kit";
import { parseEcbDaily } from "../clients/ecb-feed.js";
import { parseFeed, ratesUnavailable } from "../clients/feed-rate-source.js";
import type { ProductionRateStore } from "../domain/production-rates.js";

export interface RateFeedOptions {
  url: string;
  format: "json" | "ecb-xml";
  authorization?: string;
  timeoutMs: number;
  pollMs: number;
}

/** One pull of the feed: fetched, parsed (every rate checked), recorded; returns how many rates changed. */
export async function pullRateFeed(opts: Omit<RateFeedOptions, "pollMs">, store: ProductionRateStore, clock: Clock): Promise<number> {
  let text: string;
  try {
    const res = await fetch(opts.url, {
      headers: { accept: opts.format === "json" ? "application/json" : "application/xml, text/xml", ...(opts.authorization ? { authorization: opts.authorization } : {}) },
      signal: AbortSignal.timeout(opts.timeoutMs),
      redirect: "error",
    });
    if (!res.ok) throw new Error(`the feed answered ${res.status}`);
    text = await res.text();
  } catch (err) {
    throw ratesUnavailable(`The exchange-rate feed could not be read: ${(err as Error).message}`);
  }
  const now = clock.now();
  let body: unknown;
  if (opts.format === "ecb-xml") body = parseEcbDaily(text);
  else {
    try {
      body = JSON.parse(text);
    } catch {
      throw ratesUnavailable("The exchange-rate feed answered something other than JSON");
    }
  }
  const table = parseFeed(body, now);
  if (table.asOf.getTime() > now.getTime() + 5 * 60_000) throw ratesUnavailable(`The exchange-rate feed dates its rates ${table.asOf.toISOString()}, in the future`);
  return store.record(
    [...table.usdValue].map(([currency, v]) => ({ currency, usd_value: v.toString(), source: "feed", as_of: table.asOf })),
    now,
  );
}

/**
 * Pulls the production rate feed on a schedule (CORRIDOR_FX_RATE_FEED_POLL_SECONDS): a first pull
 * at start, then one every poll. A failed pull changes nothing and is retried at the next poll; the
 * rates it would have refreshed age, and past CORRIDOR_FX_RATE_MAX_AGE_SECONDS quotes refuse them.
 */
export function rateFeedWorker(opts: RateFeedOptions, store: ProductionRateStore, clock: Clock, log: Pick<Logger, "warn" | "debug">): PollingWorker {
  return pollingWorker({
    name: "fx-rate-feed",
    pollMs: opts.pollMs,
    log,
    pass: () => pullRateFeed(opts, store, clock),
    onPass: (changed) => {
      if (changed > 0) log.debug({ changed }, "production exchange rates refreshed from the feed");
    },
  });
}
