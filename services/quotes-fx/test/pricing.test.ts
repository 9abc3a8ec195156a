import { AppError, MAX_AMOUNT } from "@corridor/kit";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { allCurrencies, findCurrency, type Currency } from "../src/domain/currencies.js";
import { dec } from "../src/domain/decimal.js";
import { feeScheduleFor } from "../src/domain/fees.js";
import { priceQuote, quotedRate, type FeeSchedule, type PricingInput } from "../src/domain/pricing.js";

const cur = (code: string): Currency => findCurrency(code)!;

const usdEur: FeeSchedule = {
  serviceApiMultiplier: dec("1.002"),
  counterpartyMultiplier: dec("1"),
  serviceApiFixedFee: 10n,
  serviceApiVariableFeeRate: dec("0.001"),
  counterpartyFixedFee: 25n,
};

function codeOf(err: unknown): string {
  return err instanceof AppError ? err.code : String(err);
}

describe("fee and rate model: hand-computed examples", () => {
  // README worked example. rate = 1.08 × 1.002 = 1.08216 USD per EUR; counterparty fee
  // ceil(25 × 1.08216) = ceil(27.054) = 28 cents; variable fee round(10000 × 0.001) = 10;
  // fees 10 + 10 + 28 = 48; receive floor(9952 / 1.08216) = 9196 (9196 × 1.08216 = 9951.54).
  it("locked SENDING 100.00 USD to EUR delivers 91.96 EUR for 0.48 USD of fees", () => {
    const p = priceQuote({ side: "SENDING", amount: 10_000n, sending: cur("USD"), receiving: cur("EUR"), marketRate: dec("1.08"), fees: usdEur, limits: {} });
    expect(p.exchangeRate.toString()).toBe("1.08216");
    expect(p.totalSendingAmount).toBe(10_000n);
    expect(p.totalReceivingAmount).toBe(9_196n);
    expect(p.feesIncluded).toBe(48n);
    expect(p.counterpartyFeeConverted).toBe(28n);
    expect(p.rateDetails.serviceApiVariableFeeAmount).toBe(10n);
    expect(p.rateDetails.counterpartyFixedFee).toBe(25n);
  });

  // ceil(9196 × 1.08216) = 9952 net + 38 fixed = 9990 = s − round(s × 0.001) → s = 10000
  // (9999 − 10 = 9989 falls short).
  it("locked RECEIVING 91.96 EUR costs exactly the 100.00 USD of the SENDING example", () => {
    const p = priceQuote({ side: "RECEIVING", amount: 9_196n, sending: cur("USD"), receiving: cur("EUR"), marketRate: dec("1.08"), fees: usdEur, limits: {} });
    expect(p.totalSendingAmount).toBe(10_000n);
    expect(p.totalReceivingAmount).toBe(9_196n);
    expect(p.feesIncluded).toBe(48n);
  });

  // USD → BTC at 95000 USD per BTC, no fees: k = 95000 × 10^(2−8) = 0.095 cents per sat;
  // 1000 cents buy floor(1000 / 0.095) = 10526 sats; RECEIVING 10526 sats needs ceil(999.97) = 1000.
  it("converts between 2 and 8 decimals (cents to satoshis) both ways", () => {
    const none: FeeSchedule = { ...usdEur, serviceApiMultiplier: dec(1), serviceApiFixedFee: 0n, serviceApiVariableFeeRate: dec(0), counterpartyFixedFee: 0n };
    const base = { sending: cur("USD"), receiving: cur("BTC"), marketRate: dec("95000"), fees: none, limits: {} };
    expect(priceQuote({ ...base, side: "SENDING", amount: 1_000n }).totalReceivingAmount).toBe(10_526n);
    expect(priceQuote({ ...base, side: "RECEIVING", amount: 10_526n }).totalSendingAmount).toBe(1_000n);
    // A receive the sender's smallest unit cannot hit exactly costs the next cent up: 10527 sats = 1000.065 → 1001.
    expect(priceQuote({ ...base, side: "RECEIVING", amount: 10_527n }).totalSendingAmount).toBe(1_001n);
  });

  it("same-currency quotes use a rate of exactly 1 whatever the markups", () => {
    const p = priceQuote({ side: "SENDING", amount: 1_000n, sending: cur("USD"), receiving: cur("USD"), marketRate: dec("1"), fees: usdEur, limits: {} });
    expect(p.exchangeRate.toString()).toBe("1");
    // fees: 10 + round(1) + ceil(25 × 1) = 36
    expect(p.feesIncluded).toBe(36n);
    expect(p.totalReceivingAmount).toBe(964n);
    expect(p.rateDetails.serviceApiMultiplier.toString()).toBe("1");
  });

  it("rounds the quoted rate half up to 10 significant digits", () => {
    const fees = { ...usdEur, serviceApiMultiplier: dec("1.0000000005") };
    // 1.23456789 × 1.0000000005 = 1.23456789061728...
    expect(quotedRate(dec("1.23456789"), cur("USD"), cur("EUR"), fees).toString()).toBe("1.234567891");
    expect(quotedRate(dec("0.055555555555"), cur("USD"), cur("MXN"), { ...fees, serviceApiMultiplier: dec(1) }).toString()).toBe("0.05555555556");
  });

  it("refuses a sending amount that does not cover the fees, and amounts outside the platform's limits", () => {
    const base = { sending: cur("USD"), receiving: cur("EUR"), marketRate: dec("1.08"), fees: usdEur };
    expect(codeOf(catchErr(() => priceQuote({ ...base, side: "SENDING", amount: 38n, limits: {} })))).toBe("AMOUNT_OUT_OF_RANGE");
    expect(codeOf(catchErr(() => priceQuote({ ...base, side: "SENDING", amount: 10_001n, limits: { sending: { min: 1n, max: 10_000n } } })))).toBe("AMOUNT_OUT_OF_RANGE");
    expect(codeOf(catchErr(() => priceQuote({ ...base, side: "RECEIVING", amount: 9_196n, limits: { sending: { min: 1n, max: 9_999n } } })))).toBe("AMOUNT_OUT_OF_RANGE");
    expect(codeOf(catchErr(() => priceQuote({ ...base, side: "RECEIVING", amount: 99n, limits: { receiving: { min: 100n, max: 1_000n } } })))).toBe("AMOUNT_OUT_OF_RANGE");
    expect(codeOf(catchErr(() => priceQuote({ ...base, side: "SENDING", amount: MAX_AMOUNT + 1n, limits: {} })))).toBe("AMOUNT_OUT_OF_RANGE");
  });

  it("names amounts in its messages in major units with the currency (issue 27); details keep minor units", () => {
    const base = { sending: cur("USD"), receiving: cur("EUR"), marketRate: dec("1.08"), fees: usdEur };
    const over = catchErr(() => priceQuote({ ...base, side: "SENDING", amount: 10_001n, limits: { sending: { min: 100n, max: 10_000n } } })) as Error & { details?: Record<string, unknown> };
    expect(over.message).toBe("lockedCurrencyAmount 100.01 USD is outside 1.00 USD to 100.00 USD");
    expect(over.details).toMatchObject({ amount: "10001", minAmount: 100, maxAmount: 10_000 });
    expect((catchErr(() => priceQuote({ ...base, side: "SENDING", amount: 38n, limits: {} })) as Error).message).toBe("0.38 USD does not cover the fees of this quote");
  });
});

function catchErr(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error("expected a throw");
}

// Arbitrary pairs, rates and fee schedules within what configuration allows.
const currencyArb = fc.constantFrom(...allCurrencies());
const rateArb = fc
  .tuple(fc.integer({ min: 1, max: 999_999_999 }), fc.integer({ min: 0, max: 12 }))
  .map(([digits, scale]) => dec(digits).div(dec(10).pow(scale)));
const feesArb: fc.Arbitrary<FeeSchedule> = fc.record({
  serviceApiMultiplier: fc.integer({ min: 0, max: 500 }).map((bp) => dec(1).plus(dec(bp).div(10_000))),
  counterpartyMultiplier: fc.integer({ min: 0, max: 500 }).map((bp) => dec(1).plus(dec(bp).div(10_000))),
  serviceApiFixedFee: fc.bigInt({ min: 0n, max: 10_000n }),
  serviceApiVariableFeeRate: fc.integer({ min: 0, max: 4_999 }).map((bp) => dec(bp).div(10_000)),
  counterpartyFixedFee: fc.bigInt({ min: 0n, max: 10_000n }),
});
const inputArb: fc.Arbitrary<Omit<PricingInput, "side" | "amount" | "limits">> = fc.record({
  sending: currencyArb,
  receiving: currencyArb,
  marketRate: rateArb,
  fees: feesArb,
});

/** Runs a pricing that may legitimately refuse (AMOUNT_OUT_OF_RANGE); anything else fails the property. */
function tryPrice(input: PricingInput) {
  try {
    return priceQuote(input);
  } catch (err) {
    if (codeOf(err) === "AMOUNT_OUT_OF_RANGE") return undefined;
    throw err;
  }
}

describe("fee and rate model: properties", () => {
  it("RECEIVING gives the smallest send whose SENDING computation delivers at least the locked amount", () => {
    fc.assert(
      fc.property(inputArb, fc.bigInt({ min: 1n, max: 10n ** 12n }), (base, receive) => {
        const r = tryPrice({ ...base, side: "RECEIVING", amount: receive, limits: {} });
        if (!r) return;
        expect(r.totalReceivingAmount).toBe(receive);
        const s = tryPrice({ ...base, side: "SENDING", amount: r.totalSendingAmount, limits: {} });
        const perMinor = r.exchangeRate.times(dec(10).pow(base.sending.decimals - base.receiving.decimals));
        // SENDING may only refuse because its receive would pass MAX_AMOUNT (absurdly cheap receiving units).
        if (!s) {
          expect(dec(r.totalSendingAmount).div(perMinor).gt(MAX_AMOUNT.toString())).toBe(true);
          return;
        }
        expect(s!.totalReceivingAmount >= receive).toBe(true);
        expect(s!.feesIncluded).toBe(r.feesIncluded);
        const less = r.totalSendingAmount > 1n ? tryPrice({ ...base, side: "SENDING", amount: r.totalSendingAmount - 1n, limits: {} }) : undefined;
        expect(less === undefined || less.totalReceivingAmount < receive).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it("locking the receive SENDING computed never costs more, and delivers exactly that receive when a sending unit buys at most one receiving unit", () => {
    fc.assert(
      fc.property(inputArb, fc.bigInt({ min: 1n, max: 10n ** 12n }), (base, send) => {
        const s = tryPrice({ ...base, side: "SENDING", amount: send, limits: {} });
        if (!s) return;
        const r = tryPrice({ ...base, side: "RECEIVING", amount: s.totalReceivingAmount, limits: {} });
        expect(r).toBeDefined();
        expect(r!.totalSendingAmount <= send).toBe(true);
        const perMinor = s.exchangeRate.times(dec(10).pow(base.sending.decimals - base.receiving.decimals));
        const again = tryPrice({ ...base, side: "SENDING", amount: r!.totalSendingAmount, limits: {} });
        if (perMinor.gte(1)) expect(again?.totalReceivingAmount).toBe(s.totalReceivingAmount);
      }),
      { numRuns: 500 },
    );
  });

  it("fees are never negative and add up to the six rate details", () => {
    fc.assert(
      fc.property(inputArb, fc.constantFrom("SENDING" as const, "RECEIVING" as const), fc.bigInt({ min: 1n, max: MAX_AMOUNT }), (base, side, amount) => {
        const p = tryPrice({ ...base, side, amount, limits: {} });
        if (!p) return;
        const d = p.rateDetails;
        expect(d.serviceApiVariableFeeAmount >= 0n && p.counterpartyFeeConverted >= 0n && p.feesIncluded >= 0n).toBe(true);
        expect(p.feesIncluded).toBe(d.serviceApiFixedFee + d.serviceApiVariableFeeAmount + p.counterpartyFeeConverted);
        expect(p.feesIncluded < p.totalSendingAmount).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it("never answers an amount outside the limits it was given", () => {
    const limitsArb = fc.tuple(fc.bigInt({ min: 1n, max: 10n ** 9n }), fc.bigInt({ min: 0n, max: 10n ** 10n })).map(([min, span]) => ({ min, max: min + span }));
    fc.assert(
      fc.property(inputArb, fc.constantFrom("SENDING" as const, "RECEIVING" as const), fc.bigInt({ min: 1n, max: 10n ** 11n }), limitsArb, limitsArb, (base, side, amount, sl, rl) => {
        const p = tryPrice({ ...base, side, amount, limits: { sending: sl, receiving: rl } });
        if (!p) return;
        expect(p.totalSendingAmount >= sl.min && p.totalSendingAmount <= sl.max).toBe(true);
        expect(p.totalReceivingAmount >= rl.min && p.totalReceivingAmount <= rl.max).toBe(true);
        expect(p.totalSendingAmount <= MAX_AMOUNT && p.totalReceivingAmount <= MAX_AMOUNT).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});

describe("fee schedules from configuration", () => {
  it("merges default, sending, receiving and pair rules, most specific last", () => {
    const s = feeScheduleFor({ default: { serviceApiVariableFeeRate: "0.003" }, "USD:MXN": { serviceApiFixedFee: 50 } }, "USD", "MXN");
    expect(s.serviceApiVariableFeeRate.toString()).toBe("0.003");
    expect(s.serviceApiFixedFee).toBe(50n);
    expect(s.counterpartyFixedFee).toBe(500n); // built-in "*:MXN" survives a configured default
    expect(s.serviceApiMultiplier.toString()).toBe("1.002");
    const brl = feeScheduleFor({}, "BRL", "INR");
    expect([brl.serviceApiFixedFee, brl.counterpartyFixedFee]).toEqual([0n, 0n]);
  });
});
