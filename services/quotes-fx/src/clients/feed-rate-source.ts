/**
 * The common JSON shape of FX feeds, as the production rate feed (CORRIDOR_FX_RATE_FEED_FORMAT=json)
 * and operator pushes give it:
 *   {"base": "USD", "rates": {"EUR": "0.9259", "BTC": 0.0000105, ...}, "timestamp": 1760000000}
 * where rates[X] is units of X per one unit of base. Values may be strings or numbers; numbers are
 * read through their shortest decimal text, never used as floats. `timestamp` (seconds, optional)
 * becomes asOf. A base other than USD works when the feed also quotes USD.
 */
import { Decimal } from "../domain/decimal.js";
import { ratesUnavailable } from "../domain/production-rates.js";
import type { RateTable } from "../domain/rates.js";

export { ratesUnavailable };

/** Validates and converts a feed answer into USD values; anything malformed → 503 RATES_UNAVAILABLE. */
export function parseFeed(body: unknown, at: Date): RateTable {
  if (typeof body !== "object" || body === null) throw ratesUnavailable("The exchange-rate feed answered something other than a JSON object");
  const { base, rates, timestamp } = body as { base?: unknown; rates?: unknown; timestamp?: unknown };
  if (typeof base !== "string" || !/^[A-Z]{3,5}$/.test(base)) throw ratesUnavailable("The exchange-rate feed has no valid base currency");
  if (typeof rates !== "object" || rates === null) throw ratesUnavailable("The exchange-rate feed has no rates object");
  // value of one unit of X in base = 1 / rates[X]
  const inBase = new Map<string, Decimal>([[base, new Decimal(1)]]);
  for (const [code, raw] of Object.entries(rates as Record<string, unknown>)) {
    if (!/^[A-Z]{3,5}$/.test(code)) continue;
    const text = typeof raw === "number" && Number.isFinite(raw) ? String(raw) : typeof raw === "string" ? raw : "";
    if (!/^\d+(\.\d+)?(e[-+]?\d+)?$/i.test(text)) throw ratesUnavailable(`The exchange-rate feed has a bad rate for ${code}`);
    const perBase = new Decimal(text);
    if (perBase.lte(0)) throw ratesUnavailable(`The exchange-rate feed has a non-positive rate for ${code}`);
    if (code !== base) inBase.set(code, new Decimal(1).div(perBase));
  }
  const usd = inBase.get("USD");
  if (!usd) throw ratesUnavailable("The exchange-rate feed quotes no USD");
  const usdValue = new Map<string, Decimal>();
  for (const [code, v] of inBase) usdValue.set(code, v.div(usd).toSignificantDigits(20));
  const asOf = typeof timestamp === "number" && Number.isSafeInteger(timestamp) ? new Date(timestamp * 1000) : at;
  return { usdValue, asOf };
}
