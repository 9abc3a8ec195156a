import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { payoutRailOf } from "../src/domain/rails.js";
import { startHarness, usdOnly, type Harness } from "./harness.js";

const PLATFORM = "Platform:rates-grid";

/** GET /exchange-rates as Grid's ExchangeRate needs it (issue 10). */
describe("exchange rates, Grid's fields", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
    h.platforms.set(PLATFORM, usdOnly());
  });
  afterAll(async () => h.close());

  it("prices the default sending amount (10000) with fees {fixed, total}, the payout rail and the platform's bounds", async () => {
    const { rates } = await h.client.listExchangeRates({ platformId: PLATFORM, sourceCurrency: "USD", destinationCurrencies: ["EUR", "MXN"] });
    const [eur, mxn] = rates;
    // 1.08216 USD per EUR: fixed = 10 service + ceil(25 × 1.08216) = 38; total = 38 + round(10000 × 0.001) = 48.
    expect(eur).toMatchObject({ sendingAmount: 10_000n, receivingAmount: 9_196n, feesIncluded: 48n, fixedFees: 38n, destinationPaymentRail: "SEPA_INSTANT", minSendingAmount: 1n, maxSendingAmount: 100_000_000_000n });
    expect(mxn).toMatchObject({ destinationPaymentRail: "SPEI", sendingAmount: 10_000n });
    expect(mxn!.fixedFees).toBeGreaterThan(10n);
    expect(mxn!.feesIncluded).toBe(mxn!.fixedFees + 10n);
  });

  it("prices a given amount, answers 0 received when the fees exceed it, and uses the source currency's bounds", async () => {
    const small = (await h.client.listExchangeRates({ platformId: PLATFORM, sourceCurrency: "USD", destinationCurrencies: ["EUR"], sendingAmount: 30n })).rates[0]!;
    expect(small).toMatchObject({ sendingAmount: 30n, receivingAmount: 0n, fixedFees: 38n, feesIncluded: 38n });
    const fromEur = (await h.client.listExchangeRates({ platformId: PLATFORM, sourceCurrency: "EUR", destinationCurrencies: ["USD"], sendingAmount: 5_000n })).rates[0]!;
    expect(fromEur).toMatchObject({ minSendingAmount: 100n, maxSendingAmount: 1_000_000n, destinationPaymentRail: "ACH", sendingAmount: 5_000n });
    // A source currency the platform does not list is bounded by the API's own limits.
    const fromGbp = (await h.client.listExchangeRates({ platformId: PLATFORM, sourceCurrency: "GBP", destinationCurrencies: ["USD"] })).rates[0]!;
    expect(fromGbp).toMatchObject({ minSendingAmount: 1n, maxSendingAmount: 9_000_000_000_000_000n });
  });

  it("names a rail for every currency", () => {
    expect([payoutRailOf("USD"), payoutRailOf("BRL"), payoutRailOf("BTC"), payoutRailOf("USDC"), payoutRailOf("XYZ")]).toEqual(["ACH", "PIX", "LIGHTNING", "SPARK", "BANK_TRANSFER"]);
  });
});
