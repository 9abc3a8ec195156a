import { createClient, createRouterTransport } from "@connectrpc/connect";
import { appErrorInterceptor, newId } from "@corridor/kit";
import { QuotesFxAdminService } from "@corridor/proto/corridor/quotes_fx/v1/quotes_fx_admin_service_pb.js";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectPublicError, startHarness, usdOnly, type Harness } from "./harness.js";

// QuotesFxAdminService: the operator's pushed rates are what production platforms are priced with.

describe("QuotesFxAdminService", () => {
  const PROD = "Platform:prod-admin";
  let h: Harness;
  let admin: ReturnType<typeof createClient<typeof QuotesFxAdminService>>;
  beforeAll(async () => {
    h = await startHarness({ env: { CORRIDOR_FX_RATE_MAX_AGE_SECONDS: "3600" } });
    h.platforms.set(PROD, usdOnly({ environment: "PRODUCTION" }));
    admin = createClient(QuotesFxAdminService, createRouterTransport(h.built.routes, { router: { interceptors: [appErrorInterceptor] } }));
  });
  afterAll(async () => h.close());

  it("records a push, prices production quotes with it, and shows its source and freshness", async () => {
    const res = await admin.pushRates({ base: "USD", rates: { EUR: "0.8", MXN: "20" } });
    expect(res.changed).toBe(2);
    expect(res.rates.map((r) => [r.currency, r.usdValue, r.source, r.fresh])).toEqual([
      ["EUR", "1.25", "operator", true],
      ["MXN", "0.05", "operator", true],
    ]);
    const { rates } = await h.client.listExchangeRates({ platformId: PROD, sourceCurrency: "USD", destinationCurrencies: ["EUR"] });
    expect(rates[0]!.exchangeRate).toBe("1.2525"); // 1.25 × 1.002
    h.clock.advance(3_601_000);
    expect((await admin.listRates({})).rates.every((r) => !r.fresh)).toBe(true);
  });

  it("keeps a newer rate over an older push, and refuses bad input whole without recording any of it", async () => {
    const before = (await admin.listRates({})).rates;
    const old = await admin.pushRates({ base: "USD", rates: { EUR: "0.5" }, asOf: timestampFromDate(new Date(h.clock.now().getTime() - 86_400_000)) });
    expect(old.changed).toBe(0);
    const pushes: { base: string; rates: Record<string, string>; asOf?: ReturnType<typeof timestampFromDate> }[] = [
      { base: "USD", rates: { EUR: "-1", GBP: "0.7" } },
      { base: "USD", rates: {} },
      { base: "", rates: { EUR: "0.9" } },
      { base: "EUR", rates: { GBP: "0.9" } }, // no USD to rebase on
      { base: "USD", rates: { EUR: "0.9" }, asOf: timestampFromDate(new Date(h.clock.now().getTime() + 3_600_000)) },
    ];
    for (const bad of pushes) {
      await expectPublicError(admin.pushRates(bad), "INVALID", "INVALID_INPUT");
    }
    expect((await admin.listRates({})).rates).toEqual(before);
  });
});

// The operator's spreads and fees per platform (docs/fx.md): merged over the deployment's rules.
describe("QuotesFxAdminService platform fees", () => {
  const PROD = "Platform:prod-fees";
  const OTHER = "Platform:prod-fees-other";
  let h: Harness;
  let admin: ReturnType<typeof createClient<typeof QuotesFxAdminService>>;
  beforeAll(async () => {
    h = await startHarness({ env: { CORRIDOR_FX_RATE_MAX_AGE_SECONDS: "3600", CORRIDOR_QUOTE_FEES: JSON.stringify({ "USD:EUR": { serviceApiFixedFee: 30 } }) } });
    h.platforms.set(PROD, usdOnly({ environment: "PRODUCTION" }));
    h.platforms.set(OTHER, usdOnly({ environment: "PRODUCTION" }));
    admin = createClient(QuotesFxAdminService, createRouterTransport(h.built.routes, { router: { interceptors: [appErrorInterceptor] } }));
    await admin.pushRates({ base: "USD", rates: { EUR: "0.8" } });
  });
  afterAll(async () => h.close());

  const eurRate = async (platformId: string) => (await h.client.listExchangeRates({ platformId, sourceCurrency: "USD", destinationCurrencies: ["EUR"], sendingAmount: 10_000n })).rates[0]!;

  it("prices the platform with its own spread and fees, leaves the others alone, and clears back to the deployment's", async () => {
    const before = await eurRate(PROD);
    expect(before.exchangeRate).toBe("1.2525"); // 1.25 × built-in 1.002
    const set = await admin.setPlatformFees({ platformId: PROD, rulesJson: JSON.stringify({ default: { serviceApiMultiplier: "1.01" }, "USD:EUR": { serviceApiVariableFeeRate: "0.002" } }) });
    expect(JSON.parse(set.fees!.rulesJson)).toEqual({ default: { serviceApiMultiplier: "1.01" }, "USD:EUR": { serviceApiVariableFeeRate: "0.002" } });

    const after = await eurRate(PROD);
    expect(after.exchangeRate).toBe("1.2625"); // 1.25 × 1.01
    // The deployment's USD:EUR fixed fee (30) stays: the platform's rule names another field.
    const shown = await admin.getPlatformFees({ platformId: PROD, sendingCurrency: "usd", receivingCurrency: "EUR" });
    expect(shown.fees!.schedule).toMatchObject({ serviceApiMultiplier: "1.01", serviceApiFixedFee: 30n, serviceApiVariableFeeRate: "0.002", counterpartyFixedFee: 25n });
    // Fixed: the deployment's 30 plus the built-in 25-cent EUR counterparty fee at the quoted rate
    // (ceil(25 × 1.2625) = 32); variable: 10000 × 0.002 = 20 (the platform's rate, not the built-in 0.001).
    expect(after.fixedFees).toBe(62n);
    expect(after.feesIncluded).toBe(82n);

    expect((await eurRate(OTHER)).exchangeRate).toBe("1.2525");

    // A quote prices with the same schedule.
    const account = newId("InternalAccount");
    const payee = newId("ExternalAccount");
    h.internal.set(account, { id: account, platformId: PROD, customerId: "Customer:fees", type: "INTERNAL_FIAT", currency: "USD", available: 1_000_000n });
    h.external.set(payee, { id: payee, platformId: PROD, customerId: "Customer:fees", status: "ACTIVE", currency: "EUR", accountType: "EUR_ACCOUNT" });
    h.boundRails.add(`${PROD} EUR`);
    const { quote } = await h.client.createQuote({
      platformId: PROD,
      source: { sourceType: "ACCOUNT", accountId: account },
      destination: { destinationType: "ACCOUNT", accountId: payee },
      lockedCurrencySide: "SENDING",
      lockedCurrencyAmount: 10_000n,
      counterpartyInformation: { FULL_NAME: "Grace Hopper" },
    });
    expect(quote).toMatchObject({ exchangeRate: "1.2625", feesIncluded: 82n });

    expect((await admin.clearPlatformFees({ platformId: PROD })).cleared).toBe(true);
    expect((await admin.clearPlatformFees({ platformId: PROD })).cleared).toBe(false);
    expect((await eurRate(PROD)).exchangeRate).toBe("1.2525");
    expect(JSON.parse((await admin.getPlatformFees({ platformId: PROD })).fees!.rulesJson)).toEqual({});
  });

  it("refuses bad rules whole and unknown platforms, changing nothing", async () => {
    await admin.setPlatformFees({ platformId: PROD, rulesJson: JSON.stringify({ "USD:EUR": { serviceApiFixedFee: 5 } }) });
    for (const rulesJson of [
      "not json",
      "[]",
      JSON.stringify({ "USD-EUR": { serviceApiFixedFee: 1 } }),
      JSON.stringify({ default: { serviceApiMultiplier: 1.01 } }),
      JSON.stringify({ default: { serviceApiVariableFeeRate: "0.7" } }),
      JSON.stringify({ default: { serviceApiFixedFee: -1 } }),
      JSON.stringify({ default: { surprise: "1" } }),
    ]) {
      await expectPublicError(admin.setPlatformFees({ platformId: PROD, rulesJson }), "INVALID", "INVALID_INPUT");
    }
    await expectPublicError(admin.getPlatformFees({ platformId: PROD, sendingCurrency: "USD" }), "INVALID", "INVALID_INPUT");
    await expectPublicError(admin.setPlatformFees({ platformId: "nope", rulesJson: "{}" }), "INVALID", "INVALID_INPUT");
    await expect(admin.setPlatformFees({ platformId: "Platform:unknown", rulesJson: "{}" })).rejects.toThrow();
    expect(JSON.parse((await admin.getPlatformFees({ platformId: PROD })).fees!.rulesJson)).toEqual({ "USD:EUR": { serviceApiFixedFee: 5 } });
  });
});
