import { AppError } from "@corridor/kit";
import { dec, type Decimal } from "./decimal.js";
import type { RateSource } from "./rates.js";

/** A production rate as stored: USD per one major unit, where it came from, when the source set it. */
export interface ProductionRate {
  currency: string;
  usdValue: string;
  source: string;
  asOf: Date;
}

/** The operator's rate table as the service stores it (data/production-rates.ts implements it). */
export interface StoredRate {
  currency: string;
  /** Decimal text, USD per one major unit. */
  usd_value: string;
  source: string;
  as_of: Date;
}
export interface ProductionRateStore {
  all(): Promise<StoredRate[]>;
  /** Records rates; a currency keeps its row when that row's rate is newer. Returns how many changed. */
  record(rates: readonly StoredRate[], recordedAt: Date): Promise<number>;
}

export const ratesUnavailable = (message: string, details: Record<string, string | number> = {}) => new AppError("UNAVAILABLE", "RATES_UNAVAILABLE", message, details);

/**
 * Production platforms' rates: the operator's table (fed by the configured feed and by pushes),
 * read on every use so that a quote never prices with a rate older than `maxAgeMs` at the moment it
 * is priced. A currency whose rate is too old, or was never received, is unavailable: 503
 * RATES_UNAVAILABLE naming it, its source and age — never a stale price. USD is the unit (1).
 */
export function storedRateSource(opts: { read: () => Promise<ProductionRate[]>; maxAgeMs: number }): RateSource {
  return {
    scope: () => "production",
    async fetch(_platformId, at) {
      const usdValue = new Map<string, Decimal>([["USD", dec(1)]]);
      const stale = new Map<string, ProductionRate>();
      let oldest: Date | undefined;
      for (const r of await opts.read()) {
        if (r.currency === "USD") continue;
        if (at.getTime() - r.asOf.getTime() > opts.maxAgeMs) {
          stale.set(r.currency, r);
          continue;
        }
        usdValue.set(r.currency, dec(r.usdValue));
        if (!oldest || r.asOf < oldest) oldest = r.asOf;
      }
      const limitSeconds = Math.floor(opts.maxAgeMs / 1000);
      return {
        usdValue,
        asOf: oldest ?? at,
        unavailable(code) {
          const old = stale.get(code);
          if (old) {
            return ratesUnavailable(`The ${code} rate (from ${old.source}, set ${old.asOf.toISOString()}) is older than the ${limitSeconds} s this deployment prices with; no fresh rate has arrived`, {
              currency: code,
              source: old.source,
              asOf: old.asOf.toISOString(),
              maxAgeSeconds: limitSeconds,
            });
          }
          return ratesUnavailable(`No ${code} rate has been received for production platforms (the operator pushes rates or configures CORRIDOR_FX_RATE_FEED_URL)`, { currency: code, maxAgeSeconds: limitSeconds });
        },
      };
    },
  };
}
