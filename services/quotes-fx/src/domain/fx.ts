import { AppError, errors, type Clock, type FieldError } from "@corridor/kit";
import { allCurrencies, findCurrency, type Currency } from "./currencies.js";
import type { Decimal } from "./decimal.js";
import { feeScheduleFor, type FeeRules } from "./fees.js";
import type { PlatformFacts } from "./ports.js";
import { priceQuote, quotedRate, type FeeSchedule } from "./pricing.js";
import { pairRate, type RateSource, type RateTable } from "./rates.js";

export interface FxDeps {
  clock: Clock;
  /** Sandbox platforms' rates. */
  sandboxRates: RateSource;
  /** Production platforms' rates; undefined when no feed is configured (→ 501). */
  productionRates?: RateSource;
  feeRules: FeeRules;
}

export interface ExchangeRateView {
  source: Currency;
  destination: Currency;
  exchangeRate: Decimal;
  sendingAmount: bigint;
  receivingAmount: bigint;
  feesIncluded: bigint;
  updatedAt: Date;
}

/** Rates and fee schedules for a platform, as every use case of this service needs them. */
export function createFx(deps: FxDeps) {
  async function table(platformId: string, facts: PlatformFacts): Promise<RateTable> {
    const source = facts.environment === "SANDBOX" ? deps.sandboxRates : deps.productionRates;
    if (!source) throw errors.notImplemented("No exchange-rate feed is configured for production platforms (CORRIDOR_FX_RATE_FEED_URL)");
    return source.fetch(platformId, deps.clock.now());
  }

  const fees = (sending: string, receiving: string): FeeSchedule => feeScheduleFor(deps.feeRules, sending, receiving);

  return {
    table,
    fees,
    /** Market rate of a pair for this platform now. */
    async marketRate(platformId: string, facts: PlatformFacts, sending: string, receiving: string): Promise<Decimal> {
      return pairRate(await table(platformId, facts), sending, receiving);
    },

    /** GET /exchange-rates: the quoted rate (markups included) per destination, and optionally what an amount buys. */
    async listExchangeRates(
      platformId: string,
      facts: PlatformFacts,
      q: { sourceCurrency: string; destinationCurrencies: string[]; sendingAmount?: bigint },
    ): Promise<ExchangeRateView[]> {
      const errs: FieldError[] = [];
      const source = findCurrency(q.sourceCurrency);
      if (!source) errs.push({ field: "sourceCurrency", reason: `unknown currency ${q.sourceCurrency}` });
      q.destinationCurrencies.forEach((code, i) => {
        if (!findCurrency(code)) errs.push({ field: `destinationCurrency[${i}]`, reason: `unknown currency ${code}` });
      });
      if (q.sendingAmount !== undefined && q.sendingAmount < 1n) errs.push({ field: "sendingAmount", reason: "must be a positive integer" });
      if (errs.length) throw errors.invalidInput(errs);
      const destinations = q.destinationCurrencies.length
        ? [...new Set(q.destinationCurrencies)].map((c) => findCurrency(c)!)
        : allCurrencies().filter((c) => c.code !== source!.code);
      const t = await table(platformId, facts);
      return destinations.map((destination) => {
        const schedule = fees(source!.code, destination.code);
        const market = pairRate(t, source!.code, destination.code);
        let receivingAmount = 0n;
        let feesIncluded = 0n;
        if (q.sendingAmount !== undefined) {
          try {
            const p = priceQuote({ side: "SENDING", amount: q.sendingAmount, sending: source!, receiving: destination, marketRate: market, fees: schedule, limits: {} });
            receivingAmount = p.totalReceivingAmount;
            feesIncluded = p.feesIncluded;
          } catch (err) {
            // An amount that does not cover the fees buys nothing; that is an answer, not an error.
            if (!(err instanceof AppError && err.code === "AMOUNT_OUT_OF_RANGE")) throw err;
          }
        }
        return {
          source: source!,
          destination,
          exchangeRate: quotedRate(market, source!, destination, schedule),
          sendingAmount: q.sendingAmount ?? 0n,
          receivingAmount,
          feesIncluded,
          updatedAt: t.asOf,
        };
      });
    },
  };
}

export type Fx = ReturnType<typeof createFx>;
