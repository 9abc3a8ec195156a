import { newId } from "@corridor/kit";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import bolt11 from "bolt11";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addressProblem } from "../src/domain/addresses.js";
import { fundingInstructions } from "../src/domain/quote-lifecycle.js";
import { expectPublicError, fieldsOf, startHarness, usdOnly, type Harness } from "./harness.js";

const PLATFORM = "Platform:list-1";
const OTHER = "Platform:list-2";
const PROD = "Platform:list-prod";

/** GET /quotes and GET /uma-providers (issue 10). */
describe("quote list and UMA providers", () => {
  let h: Harness;
  const alice = newId("Customer");
  const bob = newId("Customer");
  const accounts = { [alice]: newId("InternalAccount"), [bob]: newId("InternalAccount") };
  const payee = newId("ExternalAccount");

  beforeAll(async () => {
    h = await startHarness();
    h.platforms.set(PLATFORM, usdOnly());
    h.platforms.set(OTHER, usdOnly());
    h.platforms.set(PROD, usdOnly({ environment: "PRODUCTION" }));
    for (const [customerId, id] of Object.entries(accounts)) h.internal.set(id, { id, platformId: PLATFORM, customerId, type: "INTERNAL_FIAT", currency: "USD", available: 1_000_000n });
    h.external.set(payee, { id: payee, platformId: PLATFORM, customerId: alice, status: "ACTIVE", currency: "EUR", accountType: "IBAN" });
  });
  afterAll(async () => h.close());

  const quote = (customerId: string) =>
    h.client.createQuote({
      platformId: PLATFORM,
      source: { sourceType: "ACCOUNT", accountId: accounts[customerId]! },
      destination: { destinationType: "ACCOUNT", accountId: payee },
      lockedCurrencySide: "SENDING",
      lockedCurrencyAmount: 10_000n,
      counterpartyInformation: { FULL_NAME: "Grace Hopper" },
    });

  it("lists quotes newest first with filters, pages and a total; another platform sees none", async () => {
    const made = [];
    for (const c of [alice, bob, alice]) {
      made.push((await quote(c)).quote!);
      h.clock.advance(1_000);
    }
    const all = await h.client.listQuotes({ platformId: PLATFORM });
    expect(all.quotes.map((q) => q.id)).toEqual(made.map((q) => q.id).reverse());
    expect(all.pageInfo?.totalCount).toBe(3n);
    const first = await h.client.listQuotes({ platformId: PLATFORM, page: { limit: 2 } });
    expect(first.quotes).toHaveLength(2);
    expect(first.pageInfo?.hasMore).toBe(true);
    const second = await h.client.listQuotes({ platformId: PLATFORM, page: { limit: 2, cursor: first.pageInfo!.nextCursor } });
    expect(second.quotes.map((q) => q.id)).toEqual([made[0]!.id]);
    expect(second.pageInfo?.hasMore).toBe(false);
    const ofAlice = await h.client.listQuotes({ platformId: PLATFORM, customerId: alice });
    expect(ofAlice.quotes.map((q) => q.id).sort()).toEqual([made[0]!.id, made[2]!.id].sort());
    const window = await h.client.listQuotes({ platformId: PLATFORM, createdAfter: made[1]!.createdAt, createdBefore: made[1]!.createdAt });
    expect(window.quotes.map((q) => q.id)).toEqual([made[1]!.id]);
    expect((await h.client.listQuotes({ platformId: PLATFORM, status: "COMPLETED" })).quotes).toEqual([]);
    expect((await h.client.listQuotes({ platformId: OTHER })).quotes).toEqual([]);
    const bad = await expectPublicError(h.client.listQuotes({ platformId: PLATFORM, status: "DONE" }), "INVALID", "INVALID_INPUT");
    expect(fieldsOf(bad)).toEqual(["status"]);
  });

  it("answers a listed PENDING quote past its expiry as EXPIRED", async () => {
    const q = (await quote(bob)).quote!;
    h.clock.advance(301_000);
    const listed = (await h.client.listQuotes({ platformId: PLATFORM, customerId: bob, createdAfter: timestampFromDate(new Date(Number(q.createdAt!.seconds) * 1000)) })).quotes;
    expect(listed.find((x) => x.id === q.id)?.status).toBe("EXPIRED");
  });

  it("lists the sandbox's UMA provider, filtered by country and currency; production without a UMA connector is 400 PAYMENT_RAIL_NOT_AVAILABLE naming UMA", async () => {
    const all = await h.client.listUmaProviders({ platformId: PLATFORM });
    expect(all.providers).toHaveLength(1);
    expect(all.providers[0]).toMatchObject({ domain: "sandbox.uma.money", allowListStatus: true });
    expect(all.providers[0]!.supportedCurrencies.map((c) => c.code)).toEqual(["EUR", "MXN", "USD"]);
    expect(all.providers[0]!.supportedRegions).toEqual(expect.arrayContaining(["US", "MX", "DE", "FR"]));
    expect((await h.client.listUmaProviders({ platformId: PLATFORM, countryCode: "MX", currencyCode: "MXN" })).providers).toHaveLength(1);
    expect((await h.client.listUmaProviders({ platformId: PLATFORM, countryCode: "BR" })).providers).toEqual([]);
    expect((await h.client.listUmaProviders({ platformId: PLATFORM, currencyCode: "BRL" })).pageInfo?.totalCount).toBe(0n);
    const bad = await expectPublicError(h.client.listUmaProviders({ platformId: PLATFORM, countryCode: "usa", currencyCode: "XXX" }), "INVALID", "INVALID_INPUT");
    expect(fieldsOf(bad)).toEqual(["countryCode", "currencyCode"]);
    const refused = await expectPublicError(h.client.listUmaProviders({ platformId: PROD }), "INVALID", "PAYMENT_RAIL_NOT_AVAILABLE");
    expect(refused.details).toEqual({ paymentRail: "UMA" });
  });
});

describe("real-time funding instructions in BTC (issue 10)", () => {
  it("carry a well-formed Spark address and a BOLT 11 invoice for exactly the amount, expiring with the quote", () => {
    const now = new Date("2026-01-01T00:00:00Z");
    const expiresAt = new Date(now.getTime() + 300_000);
    const [i] = fundingInstructions("Quote:0190f0f0-0000-7000-8000-000000000001", "BTC", 12_345n, { now, expiresAt });
    expect(i).toMatchObject({ accountType: "SPARK_WALLET", assetType: "BTC" });
    expect(addressProblem("SPARK", i!.address, true)).toBeUndefined();
    expect(addressProblem("LIGHTNING", i!.invoice, true)).toBeUndefined();
    const decoded = bolt11.decode(i!.invoice, { bech32: "bcrt", pubKeyHash: 0x6f, scriptHash: 0xc4, validWitnessVersions: [0, 1] });
    expect(decoded.satoshis).toBe(12_345);
    expect(decoded.timeExpireDate).toBe(expiresAt.getTime() / 1000);
    expect(decoded.tags.find((t) => t.tagName === "description")?.data).toBe(i!.reference);
    // Deterministic per quote; another quote gets other ones.
    expect(fundingInstructions("Quote:0190f0f0-0000-7000-8000-000000000001", "BTC", 12_345n, { now, expiresAt })[0]).toEqual(i);
    const other = fundingInstructions("Quote:0190f0f0-0000-7000-8000-000000000002", "BTC", 12_345n, { now, expiresAt })[0]!;
    expect(other.address).not.toBe(i!.address);
    expect(other.invoice).not.toBe(i!.invoice);
  });
});
