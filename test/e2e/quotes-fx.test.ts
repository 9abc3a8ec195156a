import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { skipReason, startTestSystem, type Caller, type TestSystem } from "./harness.js";

// Part 1 of issue 5 through the gateway: rates, receiver lookups, quote validation, withdrawal fees.
describe.skipIf(skipReason())("quotes-fx through the gateway", () => {
  let system: TestSystem;
  let platform: Caller;
  beforeAll(async () => {
    system = await startTestSystem();
    platform = await system.createPlatform();
  });
  afterAll(async () => system?.stop());

  it("GET /exchange-rates prices each destination and what a sending amount buys", async () => {
    const res = await platform.call("GET", "/exchange-rates?sourceCurrency=USD&destinationCurrency=EUR&destinationCurrency=BTC&sendingAmount=10000");
    expect(res.status).toBe(200);
    expect(res.body.data.map((r: any) => r.destinationCurrency.code)).toEqual(["EUR", "BTC"]);
    const eur = res.body.data[0];
    expect(eur.sourceCurrency).toEqual({ code: "USD", name: "US Dollar", symbol: "$", decimals: 2 });
    expect(typeof eur.exchangeRate).toBe("number");
    expect(eur.sendingAmount).toBe(10000);
    // The quote formula, by hand from the served rate: fees 10 + round(10000 × 0.001) + ceil(25 × rate).
    const rate = eur.exchangeRate;
    const fees = 10 + 10 + Math.ceil(25 * rate - 1e-9);
    expect(eur.feesIncluded).toBe(fees);
    expect(Math.abs(eur.receivingAmount - (10000 - fees) / rate)).toBeLessThan(1);
  });

  it("answers 400 naming query.sourceCurrency", async () => {
    const res = await platform.call("GET", "/exchange-rates?sourceCurrency=usd");
    expect(res.status).toBe(400);
    expect(res.body.details.errors.map((e: any) => e.field)).toContain("query.sourceCurrency");
  });

  it("looks up sandbox UMA receivers and 404s unknown ones", async () => {
    const ok = await platform.call("GET", `/receiver/uma/${encodeURIComponent("$success.mxn@sandbox.uma.money")}?senderUmaAddress=${encodeURIComponent("$alice@example.com")}`);
    expect(ok.status).toBe(200);
    expect(ok.body.lookupId).toMatch(/^Lookup:/);
    expect(ok.body.receiverUmaAddress).toBe("$success.mxn@sandbox.uma.money");
    expect(ok.body.supportedCurrencies[0]).toMatchObject({ currency: { code: "MXN" }, min: 100, max: 100000000 });
    expect(ok.body.requiredPayerDataFields).toContainEqual({ name: "FULL_NAME", mandatory: true });
    const missing = await platform.call("GET", `/receiver/uma/${encodeURIComponent("$nobody@sandbox.uma.money")}?senderUmaAddress=${encodeURIComponent("$alice@example.com")}`);
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe("UMA_NOT_FOUND");
  });

  it("POST /quotes names the missing lookup and payer data, and refuses amounts above the limit", async () => {
    const noLookup = await platform.call("POST", "/quotes", {
      source: { sourceType: "ACCOUNT", accountId: "InternalAccount:0199a1b2-0000-7000-8000-000000000000" },
      destination: { destinationType: "UMA_ADDRESS" },
      lockedCurrencySide: "SENDING",
      lockedCurrencyAmount: 1000,
    });
    expect(noLookup.status).toBe(400);
    expect(noLookup.body.details.errors.map((e: any) => e.field)).toEqual(["body.lookupId"]);
    const tooMuch = await platform.call("POST", "/quotes", {
      source: { sourceType: "ACCOUNT", accountId: "InternalAccount:x" },
      destination: { destinationType: "ACCOUNT", accountId: "ExternalAccount:y" },
      lockedCurrencySide: "SENDING",
      lockedCurrencyAmount: 9000000000000001,
    });
    expect(tooMuch.status).toBe(400);
  });

  it("POST /crypto/estimate-withdrawal-fee validates the address for the network", async () => {
    const res = await platform.call("POST", "/crypto/estimate-withdrawal-fee", {
      internalAccountId: "InternalAccount:0199a1b2-0000-7000-8000-000000000000",
      currency: "USDC",
      cryptoNetwork: "SOLANA",
      amount: 1000000,
      destinationAddress: "not-a-key",
    });
    expect(res.status).toBe(400);
    expect(res.body.details.errors.map((e: any) => e.field)).toEqual(["body.destinationAddress"]);
  });
});
