import { createHash } from "node:crypto";
import { AppError } from "@corridor/kit";
import { Decimal, ROUND_HALF_UP, dec } from "./decimal.js";

/**
 * Rates are kept as "USD per one major unit" of each currency; the rate of a pair is the ratio,
 * so every pair of a table is consistent (no triangular arbitrage between our own quotes).
 */
export interface RateTable {
  /** USD value of one major unit, by currency code; USD itself is 1. */
  usdValue: ReadonlyMap<string, Decimal>;
  /** When the source produced the table. */
  asOf: Date;
  /**
   * Why a currency missing from usdValue cannot be priced now (a production rate older than the
   * limit, or none received yet): a 503 the platform can retry. Undefined, or a source without it:
   * the currency is simply not one the source quotes (400 INVALID_CURRENCY).
   */
  unavailable?: (code: string) => AppError | undefined;
}

/** Where rates come from. The sandbox table is per platform (its drift); a feed is global. */
export interface RateSource {
  /** Cache key of the table this platform would get at `at`: tables with equal keys are interchangeable. */
  scope(platformId: string): string;
  fetch(platformId: string, at: Date): Promise<RateTable>;
}

/** Market rate of a pair: sending major units per one receiving major unit. */
export function pairRate(table: RateTable, sendingCode: string, receivingCode: string): Decimal {
  const s = table.usdValue.get(sendingCode);
  const r = table.usdValue.get(receivingCode);
  if (!s || !r) {
    const missing = !s ? sendingCode : receivingCode;
    throw table.unavailable?.(missing) ?? new AppError("INVALID", "INVALID_CURRENCY", `No exchange rate is available for ${missing}`, { currency: missing });
  }
  return r.div(s);
}

/** USD value of one major unit in the sandbox, before drift (round numbers, easy to check by hand). */
export const SANDBOX_USD_VALUES: Readonly<Record<string, string>> = {
  USD: "1",
  USDC: "1",
  USDT: "1",
  EUR: "1.08",
  GBP: "1.27",
  MXN: "0.055",
  BRL: "0.18",
  AED: "0.2723",
  INR: "0.012",
  CAD: "0.73",
  NGN: "0.00065",
  PHP: "0.0175",
  JPY: "0.0067",
  BTC: "95000",
  // Network fee assets (not quotable currencies, but withdrawal fees are converted from them).
  ETH: "3500",
  SOL: "180",
  POL: "0.5",
};
/** Currencies pegged to the dollar never drift. */
const PEGGED = new Set(["USD", "USDC", "USDT"]);

export const BUCKET_MS = 5 * 60 * 1000;

/**
 * The sandbox source: the fixed table, each non-pegged value moved by a drift of at most
 * ±maxDriftBps basis points that is a function of (platform, 5-minute bucket, currency) only, so
 * a test can reproduce any rate and a platform sees rates move every 5 minutes.
 */
export function sandboxRateSource(opts: { maxDriftBps: number }): RateSource {
  return {
    scope: (platformId) => `sandbox:${platformId}`,
    async fetch(platformId, at) {
      const bucket = Math.floor(at.getTime() / BUCKET_MS);
      const usdValue = new Map<string, Decimal>();
      for (const [code, value] of Object.entries(SANDBOX_USD_VALUES)) {
        const bps = PEGGED.has(code) ? 0 : driftBps(platformId, bucket, code, opts.maxDriftBps);
        usdValue.set(code, dec(value).times(dec(10_000 + bps).div(10_000)).toSignificantDigits(10, ROUND_HALF_UP));
      }
      return { usdValue, asOf: new Date(bucket * BUCKET_MS) };
    },
  };
}

/** An integer in [−max, max] from a hash: deterministic, evenly spread, not a float anywhere. */
export function driftBps(platformId: string, bucket: number, code: string, max: number): number {
  if (max <= 0) return 0;
  const h = createHash("sha256").update(`${platformId}|${bucket}|${code}`).digest();
  return (h.readUInt32BE(0) % (2 * max + 1)) - max;
}

/**
 * Keeps each scope's table for `ttlMs` of the injected clock (decisions §7: about 5 minutes), so a
 * quote and the exchange-rates answer around it agree, and a feed is asked at most once per TTL.
 * Concurrent misses share one fetch.
 */
export function cachedRateSource(inner: RateSource, ttlMs: number): RateSource {
  const entries = new Map<string, { expires: number; table: Promise<RateTable> }>();
  return {
    scope: inner.scope,
    fetch(platformId, at) {
      const key = inner.scope(platformId);
      const now = at.getTime();
      const hit = entries.get(key);
      if (hit && hit.expires > now) return hit.table;
      const table = inner.fetch(platformId, at);
      entries.set(key, { expires: now + ttlMs, table });
      // A failed fetch is not cached: the next request tries again.
      table.catch(() => {
        if (entries.get(key)?.table === table) entries.delete(key);
      });
      return table;
    },
  };
}
