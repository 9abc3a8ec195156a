import { AppError, MAX_AMOUNT, errors, type Clock, type FieldError } from "@corridor/kit";
import { allCurrencies, findCurrency, type Currency } from "./currencies.js";
import type { Decimal } from "./decimal.js";
import { feeScheduleFor, type FeeRules, type PlatformFeeStore } from "./fees.js";
import type { PlatformFacts } from "./ports.js";
import { fixedFees, priceQuote, quotedRate, variableFee, type FeeSchedule } from "./pricing.js";
import { payoutRailOf } from "./rails.js";
import { pairRate, type RateSource, type RateTable } from "./rates.js";

export interface FxDeps {
  clock: Clock;
  /** Sandbox platforms' rates. */
  sandboxRates: RateSource;
  /** Production platforms' rates (the operator's table: feed and pushes). */
  productionRates: RateSource;
  feeRules: FeeRules;
  /** The operator's rules per platform, over feeRules. */
  platformFees: PlatformFeeStore;
}

export interface ExchangeRateView {
  source: Currency;
  destination: Currency;
  exchangeRate: Decimal;
  /** The amount priced: the one asked about, or DEFAULT_RATE_SENDING_AMOUNT. */
  sendingAmount: bigint;
  /** What it delivers; 0 when the fees exceed it. */
  receivingAmount: bigint;
  /** Every fee of sendingAmount (fixedFees plus the variable fee), sending minor units. */
  feesIncluded: bigint;
  /** The fixed part of the fees, sending minor units. */
  fixedFees: bigint;
  /** The rail a payout in the destination currency goes by. */
  destinationPaymentRail: string;
  /** The platform's bounds for sending the source currency (its config; 1..MAX_AMOUNT when it lists none). */
  minSendingAmount: bigint;
  maxSendingAmount: bigint;
  updatedAt: Date;
}

/** The sending amount GET /exchange-rates prices when none is asked about (as Grid's API does), minor units. */
export const DEFAULT_RATE_SENDING_AMOUNT = 10_000n;

/** Rates and fee schedules for a platform, as every use case of this service needs them. */
export function createFx(deps: FxDeps) {
  async function table(platformId: string, facts: PlatformFacts): Promise<RateTable> {
    const source = facts.environment === "SANDBOX" ? deps.sandboxRates : deps.productionRates;
    return source.fetch(platformId, deps.clock.now());
  }

  // Read on every use (one primary-key row): a change the operator makes prices the next quote.
  const fees = async (platformId: string, sending: string, receiving: string): Promise<FeeSchedule> =>
    feeScheduleFor(deps.feeRules, sending, receiving, await deps.platformFees.get(platformId));

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
      const platformRules = await deps.platformFees.get(platformId);
      const sendingAmount = q.sendingAmount ?? DEFAULT_RATE_SENDING_AMOUNT;
      const config = facts.supportedCurrencies.find((c) => c.currencyCode === source!.code);
      const minSendingAmount = config?.minAmount ?? 1n;
      const maxSendingAmount = config && config.maxAmount < MAX_AMOUNT ? config.maxAmount : MAX_AMOUNT;
      return destinations.map((destination) => {
        const schedule = feeScheduleFor(deps.feeRules, source!.code, destination.code, platformRules);
        const market = pairRate(t, source!.code, destination.code);
        const fixed = fixedFees(market, source!, destination, schedule);
        let receivingAmount = 0n;
        try {
          receivingAmount = priceQuote({ side: "SENDING", amount: sendingAmount, sending: source!, receiving: destination, marketRate: market, fees: schedule, limits: {} }).totalReceivingAmount;
        } catch (err) {
          // An amount that does not cover the fees buys nothing; that is an answer, not an error.
          if (!(err instanceof AppError && err.code === "AMOUNT_OUT_OF_RANGE")) throw err;
        }
        return {
          source: source!,
          destination,
          exchangeRate: quotedRate(market, source!, destination, schedule),
          sendingAmount,
          receivingAmount,
          feesIncluded: fixed + variableFee(sendingAmount, schedule.serviceApiVariableFeeRate),
          fixedFees: fixed,
          destinationPaymentRail: payoutRailOf(destination.code),
          minSendingAmount,
          maxSendingAmount,
          updatedAt: t.asOf,
        };
      });
    },
  };
}

export type Fx = ReturnType<typeof createFx>;
