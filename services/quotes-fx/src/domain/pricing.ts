import { AppError, MAX_AMOUNT, formatAmount } from "@corridor/kit";
import type { Currency } from "./currencies.js";
import { Decimal, ROUND_DOWN, ROUND_HALF_UP, ROUND_UP, dec, pow10, toBigInt } from "./decimal.js";

/**
 * The fee and rate model (decisions §7), pure: no I/O, no clock, bigint amounts in, bigint out.
 * README "Fee and rate model" walks through one quote by hand with these exact rules.
 */

/** The fee parameters of one currency pair (see fees.ts for where they come from). */
export interface FeeSchedule {
  /** Service markup on the market rate (1.002 = the sender pays 0.2% more per receiving unit). */
  serviceApiMultiplier: Decimal;
  /** Counterparty (receiving institution) markup on the market rate. */
  counterpartyMultiplier: Decimal;
  /** Service fixed fee, sending minor units. */
  serviceApiFixedFee: bigint;
  /** Service variable fee as a fraction of the total sending amount, 0 ≤ rate < 1. */
  serviceApiVariableFeeRate: Decimal;
  /** Counterparty fixed fee, receiving minor units (converted at the quote's rate into fees). */
  counterpartyFixedFee: bigint;
}

export interface AmountLimits {
  min: bigint;
  max: bigint;
}

export type LockedSide = "SENDING" | "RECEIVING";

export interface PricingInput {
  side: LockedSide;
  /** Minor units of the locked side's currency. */
  amount: bigint;
  sending: Currency;
  receiving: Currency;
  /** Market rate: sending major units per one receiving major unit (from the rate source). */
  marketRate: Decimal;
  fees: FeeSchedule;
  /** Per-currency bounds from the platform's config; a side without bounds is checked against MAX_AMOUNT only. */
  limits: { sending?: AmountLimits; receiving?: AmountLimits };
}

export interface RateDetails {
  counterpartyMultiplier: Decimal;
  /** Receiving minor units, as configured. */
  counterpartyFixedFee: bigint;
  serviceApiMultiplier: Decimal;
  /** Sending minor units. */
  serviceApiFixedFee: bigint;
  serviceApiVariableFeeRate: Decimal;
  /** Sending minor units: round half up of totalSendingAmount × serviceApiVariableFeeRate. */
  serviceApiVariableFeeAmount: bigint;
}

export interface Pricing {
  totalSendingAmount: bigint;
  totalReceivingAmount: bigint;
  /** The quote's rate: sending major units per one receiving major unit, 10 significant digits. */
  exchangeRate: Decimal;
  /** Every fee, sending minor units. */
  feesIncluded: bigint;
  /** The counterparty fixed fee in sending minor units (part of feesIncluded). */
  counterpartyFeeConverted: bigint;
  rateDetails: RateDetails;
}

/** Significant digits of a quoted rate: enough for BTC against INR, few enough to check by hand. */
export const RATE_SIGNIFICANT_DIGITS = 10;

export function amountOutOfRange(message: string, details: Record<string, string | number> = {}): AppError {
  return new AppError("INVALID", "AMOUNT_OUT_OF_RANGE", message, details);
}

/**
 * The rate a quote uses: market × serviceApiMultiplier × counterpartyMultiplier, rounded half up
 * to 10 significant digits. A same-currency pair is exactly 1 (no markup on a rate that is not
 * an exchange).
 */
export function quotedRate(marketRate: Decimal, sending: Currency, receiving: Currency, fees: FeeSchedule): Decimal {
  if (sending.code === receiving.code) return dec(1);
  return marketRate.times(fees.serviceApiMultiplier).times(fees.counterpartyMultiplier).toSignificantDigits(RATE_SIGNIFICANT_DIGITS, ROUND_HALF_UP);
}

/** Sending minor units per one receiving minor unit at `rate`. */
function minorRate(rate: Decimal, sending: Currency, receiving: Currency): Decimal {
  return rate.times(pow10(sending.decimals - receiving.decimals));
}

/** round half up (send × rate): the variable fee of a total sending amount. */
export function variableFee(send: bigint, rate: Decimal): bigint {
  return toBigInt(dec(send).times(rate).toDecimalPlaces(0, ROUND_HALF_UP));
}

/**
 * The fixed part of a pair's fees, sending minor units: the service fixed fee plus the
 * counterparty's fixed fee converted at the quoted rate (rounded up), as priceQuote charges them.
 */
export function fixedFees(marketRate: Decimal, sending: Currency, receiving: Currency, fees: FeeSchedule): bigint {
  const k = minorRate(quotedRate(marketRate, sending, receiving, fees), sending, receiving);
  return fees.serviceApiFixedFee + toBigInt(dec(fees.counterpartyFixedFee).times(k).toDecimalPlaces(0, ROUND_UP));
}

/** Computes a whole quote, either side locked; throws AMOUNT_OUT_OF_RANGE (400) when it cannot. */
export function priceQuote(input: PricingInput): Pricing {
  const { sending, receiving, fees } = input;
  if (fees.serviceApiVariableFeeRate.lt(0) || fees.serviceApiVariableFeeRate.gte(1)) throw new RangeError("serviceApiVariableFeeRate must be in [0, 1)");
  if (fees.serviceApiFixedFee < 0n || fees.counterpartyFixedFee < 0n) throw new RangeError("fixed fees must not be negative");
  const lockedCurrency = input.side === "SENDING" ? sending : receiving;
  if (input.amount < 1n || input.amount > MAX_AMOUNT) {
    throw amountOutOfRange(`lockedCurrencyAmount must be ${formatAmount(1n, lockedCurrency.code)} to ${formatAmount(MAX_AMOUNT, lockedCurrency.code)} (1 to ${MAX_AMOUNT} minor units)`, { field: "lockedCurrencyAmount" });
  }
  const rate = quotedRate(input.marketRate, sending, receiving, fees);
  const k = minorRate(rate, sending, receiving);
  // The counterparty charges in the receiving currency; the sender pays it converted, rounded up.
  const counterpartyFee = toBigInt(dec(fees.counterpartyFixedFee).times(k).toDecimalPlaces(0, ROUND_UP));
  const fixed = fees.serviceApiFixedFee + counterpartyFee;

  let send: bigint;
  let receive: bigint;
  if (input.side === "SENDING") {
    send = input.amount;
    receive = receiveFor(send, fixed, fees.serviceApiVariableFeeRate, k);
    if (receive < 1n) {
      throw amountOutOfRange(`${formatAmount(send, sending.code)} does not cover the fees of this quote`, { field: "lockedCurrencyAmount" });
    }
  } else {
    receive = input.amount;
    send = sendFor(receive, fixed, fees.serviceApiVariableFeeRate, k);
  }
  checkLimits(send, sending, input.limits.sending, input.side === "SENDING");
  checkLimits(receive, receiving, input.limits.receiving, input.side === "RECEIVING");

  const variable = variableFee(send, fees.serviceApiVariableFeeRate);
  return {
    totalSendingAmount: send,
    totalReceivingAmount: receive,
    exchangeRate: rate,
    feesIncluded: fees.serviceApiFixedFee + variable + counterpartyFee,
    counterpartyFeeConverted: counterpartyFee,
    rateDetails: {
      counterpartyMultiplier: sending.code === receiving.code ? dec(1) : fees.counterpartyMultiplier,
      counterpartyFixedFee: fees.counterpartyFixedFee,
      serviceApiMultiplier: sending.code === receiving.code ? dec(1) : fees.serviceApiMultiplier,
      serviceApiFixedFee: fees.serviceApiFixedFee,
      serviceApiVariableFeeRate: fees.serviceApiVariableFeeRate,
      serviceApiVariableFeeAmount: variable,
    },
  };
}

/** Locked SENDING: floor((send − fees) ÷ k), never below zero. */
function receiveFor(send: bigint, fixed: bigint, variableRate: Decimal, k: Decimal): bigint {
  const net = send - fixed - variableFee(send, variableRate);
  if (net <= 0n) return 0n;
  return toBigInt(dec(net).div(k).toDecimalPlaces(0, ROUND_DOWN));
}

/**
 * Locked RECEIVING: the smallest send whose SENDING computation yields at least `receive`.
 * floor(net ÷ k) ≥ r ⇔ net ≥ ceil(r × k), and net(s) = s − fixed − round(s × v) never decreases
 * and grows by 0 or 1 per unit of s, so the answer is found from the estimate T ÷ (1 − v) in a
 * step or two either way.
 */
function sendFor(receive: bigint, fixed: bigint, variableRate: Decimal, k: Decimal): bigint {
  const target = toBigInt(dec(receive).times(k).toDecimalPlaces(0, ROUND_UP)) + fixed;
  const g = (s: bigint) => s - variableFee(s, variableRate);
  let s = toBigInt(dec(target).div(dec(1).minus(variableRate)).toDecimalPlaces(0, ROUND_UP));
  while (s > 0n && g(s - 1n) >= target) s -= 1n;
  while (g(s) < target) s += 1n;
  return s;
}

function checkLimits(amount: bigint, currency: Currency, limits: AmountLimits | undefined, locked: boolean): void {
  const min = limits?.min ?? 1n;
  const max = limits && limits.max < MAX_AMOUNT ? limits.max : MAX_AMOUNT;
  if (amount < min || amount > max) {
    const what = locked ? "lockedCurrencyAmount" : "the computed amount";
    throw amountOutOfRange(`${what} ${formatAmount(amount, currency.code)} is outside ${formatAmount(min, currency.code)} to ${formatAmount(max, currency.code)}`, {
      field: locked ? "lockedCurrencyAmount" : "",
      currency: currency.code,
      amount: amount.toString(),
      minAmount: Number(min),
      maxAmount: Number(max),
    });
  }
}
