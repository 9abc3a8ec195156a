import { bench, describe } from "vitest";
import { findCurrency, type Currency } from "../../services/quotes-fx/src/domain/currencies.js";
import { dec, toBigInt, ROUND_DOWN, ROUND_HALF_UP } from "../../services/quotes-fx/src/domain/decimal.js";
import { DEFAULT_FEE_RULES, feeScheduleFor } from "../../services/quotes-fx/src/domain/fees.js";
import { priceQuote, quotedRate, type PricingInput } from "../../services/quotes-fx/src/domain/pricing.js";

// The pure fee and rate model of quotes-fx, the work behind every POST /quotes and every
// GET /exchange-rates entry. Inputs are the README's worked examples, so each case below is checked
// once against the hand-computed answer before it is timed: a benchmark of a path that throws
// would measure the wrong thing.

const cur = (code: string): Currency => {
  const c = findCurrency(code);
  if (!c) throw new Error(`unknown currency ${code}`);
  return c;
};

const usd = cur("USD");
const eur = cur("EUR");
const btc = cur("BTC");
const usdEurFees = feeScheduleFor({}, "USD", "EUR");
const usdBtcFees = feeScheduleFor({}, "USD", "BTC");
const limits = { sending: { min: 1n, max: 100_000_000n }, receiving: { min: 1n, max: 100_000_000n } };

const sendingUsdEur: PricingInput = { side: "SENDING", amount: 10_000n, sending: usd, receiving: eur, marketRate: dec("1.08"), fees: usdEurFees, limits };
const receivingUsdEur: PricingInput = { ...sendingUsdEur, side: "RECEIVING", amount: 9_196n };
const sendingUsdBtc: PricingInput = { side: "SENDING", amount: 1_000_000n, sending: usd, receiving: btc, marketRate: dec("95000"), fees: usdBtcFees, limits: {} };
const receivingUsdBtc: PricingInput = { ...sendingUsdBtc, side: "RECEIVING", amount: 1_000_000n };

function expectEqual(actual: unknown, expected: unknown, what: string): void {
  if (actual !== expected) throw new Error(`${what}: expected ${String(expected)}, got ${String(actual)}`);
}

// README: 100.00 USD locked SENDING buys 91.96 EUR for 0.48 USD of fees, and locking the 91.96 EUR
// costs exactly those 100.00 USD.
expectEqual(priceQuote(sendingUsdEur).totalReceivingAmount, 9_196n, "USD→EUR SENDING receive");
expectEqual(priceQuote(sendingUsdEur).feesIncluded, 48n, "USD→EUR SENDING fees");
expectEqual(priceQuote(receivingUsdEur).totalSendingAmount, 10_000n, "USD→EUR RECEIVING send");
expectEqual(priceQuote(sendingUsdBtc).totalReceivingAmount > 0n, true, "USD→BTC SENDING receive");
expectEqual(priceQuote(receivingUsdBtc).totalReceivingAmount, 1_000_000n, "USD→BTC RECEIVING receive");

describe("quotes-fx priceQuote (pricing.ts)", () => {
  bench("USD→EUR, SENDING locked", () => {
    priceQuote(sendingUsdEur);
  });
  bench("USD→EUR, RECEIVING locked", () => {
    priceQuote(receivingUsdEur);
  });
  bench("USD→BTC (2 → 8 decimals), SENDING locked", () => {
    priceQuote(sendingUsdBtc);
  });
  bench("USD→BTC (2 → 8 decimals), RECEIVING locked", () => {
    priceQuote(receivingUsdBtc);
  });
  bench("quotedRate alone (USD→EUR)", () => {
    quotedRate(sendingUsdEur.marketRate, usd, eur, usdEurFees);
  });
});

describe("quotes-fx fee schedule (fees.ts)", () => {
  bench("feeScheduleFor, built-in rules (USD→EUR)", () => {
    feeScheduleFor({}, "USD", "EUR");
  });
  const configured = { ...DEFAULT_FEE_RULES, "USD:EUR": { serviceApiVariableFeeRate: "0.0015" }, default: { serviceApiMultiplier: "1.003" } };
  bench("feeScheduleFor, configured rules (USD→EUR)", () => {
    feeScheduleFor(configured, "USD", "EUR");
  });
});

describe("quotes-fx decimal (decimal.ts)", () => {
  const amount = 123_456_789n;
  const rate = dec("1.08216");
  bench("dec(bigint) × rate, round half up, toBigInt", () => {
    toBigInt(dec(amount).times(rate).toDecimalPlaces(0, ROUND_HALF_UP));
  });
  bench("dec(decimal string)", () => {
    dec("1.0821600000");
  });
  // priceQuote's one division (receive = net ÷ k), at the service's 60 significant digits.
  const k = dec("1.08216");
  bench("dec(bigint) ÷ rate, round down, toBigInt", () => {
    toBigInt(dec(amount).div(k).toDecimalPlaces(0, ROUND_DOWN));
  });
});
