import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { newId } from "@corridor/kit";
import { bech32, bech32m } from "bech32";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseFeed } from "../src/clients/feed-rate-source.js";
import { productionRateStore } from "../src/data/production-rates.js";
import { pullRateFeed } from "../src/workers/rate-feed.js";
import { addressProblem } from "../src/domain/addresses.js";
import { dec } from "../src/domain/decimal.js";
import { cachedRateSource, driftBps, sandboxRateSource, type RateSource } from "../src/domain/rates.js";
import { expectPublicError, fieldsOf, startHarness, usdOnly, type Harness } from "./harness.js";

const PLATFORM = "Platform:test-1";
const PROD = "Platform:prod-1";

describe("quotes-fx service", () => {
  let h: Harness;
  let feedCalls = 0;
  const fakeFeed: RateSource = {
    scope: () => "feed",
    async fetch(_p, at) {
      feedCalls += 1;
      return { usdValue: new Map([["USD", dec(1)], ["EUR", dec("1.1")]]), asOf: at };
    },
  };
  beforeAll(async () => {
    h = await startHarness({ productionRates: fakeFeed });
    h.platforms.set(PLATFORM, usdOnly());
    h.platforms.set(PROD, usdOnly({ environment: "PRODUCTION" }));
  });
  afterAll(async () => h.close());

  describe("GET /exchange-rates", () => {
    // 1.08 USD per EUR × 1.002 service markup = 1.08216; 100.00 USD buys 91.96 EUR for 0.48 of fees (README example).
    it("prices USD→EUR with the markup and the SENDING formula", async () => {
      const res = await h.client.listExchangeRates({ platformId: PLATFORM, sourceCurrency: "USD", destinationCurrencies: ["EUR"], sendingAmount: 10_000n });
      expect(res.rates).toHaveLength(1);
      const [r] = res.rates;
      expect(r).toMatchObject({ exchangeRate: "1.08216", sendingAmount: 10_000n, receivingAmount: 9_196n, feesIncluded: 48n });
      expect(r!.destinationCurrency).toMatchObject({ code: "EUR", decimals: 2 });
    });

    it("lists every other known currency when no destination is named, BTC in satoshis", async () => {
      const res = await h.client.listExchangeRates({ platformId: PLATFORM, sourceCurrency: "USD" });
      const codes = res.rates.map((r) => r.destinationCurrency!.code);
      expect(codes).toEqual(expect.arrayContaining(["EUR", "MXN", "BRL", "AED", "GBP", "INR", "BTC", "USDC"]));
      expect(codes).not.toContain("USD");
      expect(res.rates.find((r) => r.destinationCurrency!.code === "BTC")!.destinationCurrency!.decimals).toBe(8);
    });

    it("names every unknown currency", async () => {
      const err = await expectPublicError(h.client.listExchangeRates({ platformId: PLATFORM, sourceCurrency: "XXX", destinationCurrencies: ["EUR", "YYY"] }), "INVALID", "INVALID_INPUT");
      expect(fieldsOf(err)).toEqual(["sourceCurrency", "destinationCurrency[1]"]);
    });

    it("asks the production source on every use: no cached price outlives the rate it came from", async () => {
      feedCalls = 0;
      const ask = () => h.client.listExchangeRates({ platformId: PROD, sourceCurrency: "USD", destinationCurrencies: ["EUR"] });
      await ask();
      h.clock.advance(1_000);
      expect((await ask()).rates[0]!.exchangeRate).toBe("1.1022"); // 1.1 × 1.002
      expect(feedCalls).toBe(2);
    });
  });

  describe("receiver lookups", () => {
    it("resolves $success.eur@sandbox.uma.money with an estimate, limits and the payer data it needs", async () => {
      const { lookup } = await h.client.lookupUmaReceiver({ platformId: PLATFORM, receiverUmaAddress: "$success.eur@sandbox.uma.money", customerId: newId("Customer") });
      expect(lookup!.id).toMatch(/^Lookup:/);
      expect(lookup!.receiverUmaAddress).toBe("$success.eur@sandbox.uma.money");
      expect(lookup!.supportedCurrencies).toHaveLength(1);
      expect(lookup!.supportedCurrencies[0]).toMatchObject({ estimatedExchangeRate: "1.08216", min: 100n, max: 100_000_000n });
      expect(lookup!.requiredPayerDataFields).toEqual(expect.arrayContaining([expect.objectContaining({ name: "FULL_NAME", mandatory: true })]));
    });

    it("answers 404 UMA_NOT_FOUND for an unknown address and 400 for a malformed one or a missing sender", async () => {
      await expectPublicError(h.client.lookupUmaReceiver({ platformId: PLATFORM, receiverUmaAddress: "$nobody@sandbox.uma.money", customerId: newId("Customer") }), "NOT_FOUND", "UMA_NOT_FOUND");
      const bad = await expectPublicError(h.client.lookupUmaReceiver({ platformId: PLATFORM, receiverUmaAddress: "alice", senderUmaAddress: "" }), "INVALID", "INVALID_INPUT");
      expect(fieldsOf(bad)).toEqual(["receiverUmaAddress", "customerId"]);
    });

    it("looks up an external account through the ledger, and 404s another platform's", async () => {
      const id = newId("ExternalAccount");
      h.external.set(id, { id, platformId: PLATFORM, customerId: newId("Customer"), status: "ACTIVE", currency: "EUR", accountType: "EUR_ACCOUNT" });
      const { lookup } = await h.client.lookupExternalAccountReceiver({ platformId: PLATFORM, accountId: id, senderUmaAddress: "$bob@acme.sandbox.uma.money" });
      expect(lookup).toMatchObject({ accountId: id, requiredPayerDataFields: [] });
      expect(lookup!.supportedCurrencies[0]).toMatchObject({ min: 100n, max: 1_000_000n });
      await expectPublicError(h.client.lookupExternalAccountReceiver({ platformId: PROD, accountId: id, customerId: newId("Customer") }), "NOT_FOUND", "EXTERNAL_ACCOUNT_NOT_FOUND");
    });
  });

  describe("POST /quotes validation and pricing", () => {
    const customerId = newId("Customer");
    const usdAccount = newId("InternalAccount");
    const wallet = newId("InternalAccount");
    beforeAll(() => {
      h.internal.set(usdAccount, { id: usdAccount, platformId: PLATFORM, customerId, type: "INTERNAL_FIAT", currency: "USD", available: 0n });
      h.internal.set(wallet, { id: wallet, platformId: PLATFORM, customerId, type: "EMBEDDED_WALLET", currency: "USDC", available: 0n });
    });
    const base = (over: Record<string, unknown> = {}) => ({
      platformId: PLATFORM,
      source: { sourceType: "ACCOUNT", accountId: usdAccount },
      destination: { destinationType: "UMA_ADDRESS", currency: "EUR" },
      lockedCurrencySide: "SENDING",
      lockedCurrencyAmount: 10_000n,
      senderCustomerInfo: { FULL_NAME: "Ada Lovelace" },
      counterpartyInformation: { FULL_NAME: "Grace Hopper" },
      ...over,
    });
    const lookupId = async (address = "$success.eur@sandbox.uma.money") =>
      (await h.client.lookupUmaReceiver({ platformId: PLATFORM, receiverUmaAddress: address, customerId })).lookup!.id;

    it("names every bad field at once", async () => {
      const err = await expectPublicError(
        h.client.createQuote({ platformId: PLATFORM, source: { sourceType: "CARD" }, destination: { destinationType: "UMA_ADDRESS" }, lockedCurrencySide: "BOTH", lockedCurrencyAmount: 0n, purposeOfPayment: "FUN" }),
        "INVALID",
        "INVALID_INPUT",
      );
      expect(fieldsOf(err)).toEqual(["source.sourceType", "lookupId", "lockedCurrencySide", "lockedCurrencyAmount", "purposeOfPayment"]);
    });

    it("requires the payer data the lookup asked for and the platform's counterparty fields", async () => {
      const id = await lookupId("$fail.compliance.usd@sandbox.uma.money");
      const err = await expectPublicError(h.client.createQuote(base({ lookupId: id, destination: { destinationType: "UMA_ADDRESS" }, senderCustomerInfo: { FULL_NAME: "Ada" } })), "INVALID", "MISSING_MANDATORY_USER_INFO");
      expect(fieldsOf(err)).toEqual(["senderCustomerInfo.BIRTH_DATE", "senderCustomerInfo.NATIONALITY"]);
      const eur = await lookupId();
      const cp = await expectPublicError(h.client.createQuote(base({ lookupId: eur, counterpartyInformation: {} })), "INVALID", "MISSING_MANDATORY_USER_INFO");
      expect(fieldsOf(cp)).toEqual(["counterpartyInformation.FULL_NAME"]);
    });

    it("refuses a lookup once its 5 minutes are over", async () => {
      const id = await lookupId();
      h.clock.advance(300_000);
      await expectPublicError(h.client.createQuote(base({ lookupId: id })), "INVALID", "LOOKUP_EXPIRED");
    });

    it("a sandbox platform's lookup lives 5 minutes of its sandbox clock, like its quotes (the ledger expires its transaction by that clock)", async () => {
      h.sandbox.offsetMs.set(PLATFORM, 3_600_000);
      try {
        const { lookup } = await h.client.lookupUmaReceiver({ platformId: PLATFORM, receiverUmaAddress: "$success.eur@sandbox.uma.money", customerId });
        expect(timestampMs(lookup!.expiresAt!)).toBe(h.clock.now().getTime() + 3_600_000 + 300_000);
        // An hour ahead of the service clock, it is still usable...
        const { quote } = await h.client.createQuote(base({ lookupId: lookup!.id }));
        expect(quote!.status).toBe("PENDING");
        // ...until 5 minutes have passed on the sandbox clock.
        h.sandbox.offsetMs.set(PLATFORM, 3_600_000 + 300_000);
        await expectPublicError(h.client.createQuote(base({ lookupId: lookup!.id })), "INVALID", "LOOKUP_EXPIRED");
      } finally {
        h.sandbox.offsetMs.delete(PLATFORM);
      }
    });

    it("refuses immediatelyExecute from an embedded wallet", async () => {
      const err = await expectPublicError(h.client.createQuote(base({ lookupId: await lookupId(), source: { sourceType: "ACCOUNT", accountId: wallet }, immediatelyExecute: true })), "INVALID", "INVALID_INPUT");
      expect(fieldsOf(err)).toEqual(["immediatelyExecute"]);
    });

    it("answers AMOUNT_OUT_OF_RANGE when the receive passes the platform's EUR maximum", async () => {
      // EUR max is 1,000,000 minor units in this platform's config.
      await expectPublicError(h.client.createQuote(base({ lookupId: await lookupId(), lockedCurrencySide: "RECEIVING", lockedCurrencyAmount: 1_000_001n })), "INVALID", "AMOUNT_OUT_OF_RANGE");
    });

    it("prices a valid quote and creates it PENDING with its transaction", async () => {
      const { quote } = await h.client.createQuote(base({ lookupId: await lookupId() }));
      expect(quote).toMatchObject({ status: "PENDING", totalSendingAmount: 10_000n, totalReceivingAmount: 9_196n, feesIncluded: 48n, exchangeRate: "1.08216" });
      expect(h.transactions.get(quote!.transactionId)).toMatchObject({ status: "PENDING", quoteId: quote!.id });
    });
  });

  describe("POST /crypto/estimate-withdrawal-fee", () => {
    const account = newId("InternalAccount");
    beforeAll(() => {
      h.internal.set(account, { id: account, platformId: PLATFORM, customerId: "", type: "INTERNAL_CRYPTO", currency: "USDC", available: 0n });
    });
    // 65000 gas × 20 gwei = 1.3e15 wei = 0.0013 ETH × 3500 USD = 4.55 USDC = 4_550_000 micro-USDC.
    it("converts the Ethereum gas fee into USDC", async () => {
      const e = await h.client.estimateWithdrawalFee({
        platformId: PLATFORM,
        internalAccountId: account,
        currency: "USDC",
        cryptoNetwork: "ETHEREUM",
        amount: 10_000_000n,
        destinationAddress: "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
      });
      expect(e).toMatchObject({ networkFee: 1_300_000_000_000_000n, networkFeeAsset: "ETH", applicationFee: 0n, totalFee: 4_550_000n, netAmount: 5_450_000n });
    });

    it("rejects a bad checksum, a currency the network does not carry and an unknown account", async () => {
      const req = { platformId: PLATFORM, internalAccountId: account, currency: "USDC", cryptoNetwork: "ETHEREUM", amount: 10_000_000n, destinationAddress: "0x5aaeb6053F3E94C9b9A09f33669435E7Ef1BeAed" };
      expect(fieldsOf(await expectPublicError(h.client.estimateWithdrawalFee(req), "INVALID", "INVALID_INPUT"))).toEqual(["destinationAddress"]);
      expect(fieldsOf(await expectPublicError(h.client.estimateWithdrawalFee({ ...req, cryptoNetwork: "BITCOIN" }), "INVALID", "INVALID_INPUT"))).toEqual(["currency"]);
      await expectPublicError(
        h.client.estimateWithdrawalFee({ ...req, destinationAddress: "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", internalAccountId: newId("InternalAccount") }),
        "NOT_FOUND",
        "INTERNAL_ACCOUNT_NOT_FOUND",
      );
    });
  });
});

describe("addresses per network", () => {
  const words = (bytes: number[]) => bech32.toWords(Uint8Array.from(bytes));
  const key = [0x02, ...Array.from({ length: 32 }, (_, i) => i + 1)];
  const cases: [Parameters<typeof addressProblem>[0], string, boolean][] = [
    ["ETHEREUM", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", true],
    ["BASE", "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed", true],
    ["POLYGON", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD", false],
    ["ETHEREUM", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeA", false],
    ["SOLANA", "11111111111111111111111111111111", true],
    ["SOLANA", "0OIl", false],
    ["BITCOIN", "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4", true],
    ["BITCOIN", "bc1p5d7rjq7g6rdk2yhzks9smlaqtedr4dekq08ge8ztwac72sfr9rusxg3297", true],
    ["BITCOIN", "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2", true],
    ["BITCOIN", "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN3", false],
    ["BITCOIN", "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t5", false],
    ["LIGHTNING", bech32.encode("lnbc2500u", words([...key, 7, 7, 7]), 2000), true],
    ["LIGHTNING", bech32.encode("lnxx2500u", words([...key]), 2000), false],
    ["SPARK", bech32m.encode("spark", words(key), 200), true],
    ["SPARK", bech32m.encode("spark", words([0x0a, 0x21, ...key]), 200), true],
    ["SPARK", bech32m.encode("spark", words(key.slice(1)), 200), false],
    ["SPARK", bech32.encode("spark", words(key), 200), false],
  ];
  it.each(cases)("%s %s valid=%s", (network, address, valid) => {
    expect(addressProblem(network, address, false) === undefined).toBe(valid);
  });

  it("admits test-network encodings only in the sandbox", () => {
    expect(addressProblem("BITCOIN", "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx", true)).toBeUndefined();
    expect(addressProblem("BITCOIN", "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx", false)).toBeDefined();
  });
});

describe("rate sources", () => {
  it("sandbox drift is a pure function of platform, 5-minute bucket and currency, within the bound", async () => {
    const src = sandboxRateSource({ maxDriftBps: 50 });
    const at = new Date("2025-10-13T12:01:00Z");
    const a = await src.fetch("Platform:a", at);
    const again = await src.fetch("Platform:a", new Date("2025-10-13T12:04:59Z"));
    expect(a.usdValue.get("EUR")!.toString()).toBe(again.usdValue.get("EUR")!.toString());
    expect(a.usdValue.get("USDC")!.toString()).toBe("1");
    const eur = a.usdValue.get("EUR")!;
    expect(eur.gte("1.0746") && eur.lte("1.0854")).toBe(true);
    for (let b = 0; b < 200; b++) expect(Math.abs(driftBps("Platform:a", b, "EUR", 50))).toBeLessThanOrEqual(50);
    const buckets = new Set(Array.from({ length: 20 }, (_, b) => driftBps("Platform:a", b, "EUR", 50)));
    expect(buckets.size).toBeGreaterThan(1);
  });

  it("does not cache a failed fetch", async () => {
    let calls = 0;
    const flaky: RateSource = {
      scope: () => "x",
      async fetch(_p, at) {
        calls += 1;
        if (calls === 1) throw new Error("down");
        return { usdValue: new Map([["USD", dec(1)]]), asOf: at };
      },
    };
    const cached = cachedRateSource(flaky, 300_000);
    const at = new Date();
    await expect(cached.fetch("p", at)).rejects.toThrow("down");
    await cached.fetch("p", at);
    await cached.fetch("p", at);
    expect(calls).toBe(2);
  });

  describe("production feed over HTTP", () => {
    let h: Harness;
    let server: Server;
    let url: string;
    let answer: { status: number; body: string } = { status: 200, body: "" };
    let seenAuth = "";
    beforeAll(async () => {
      server = createServer((req, res) => {
        seenAuth = req.headers.authorization ?? "";
        res.writeHead(answer.status, { "content-type": "application/json" }).end(answer.body);
      });
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/rates`;
      h = await startHarness();
    });
    afterAll(async () => {
      await h.close();
      await new Promise<void>((r) => server.close(() => r()));
    });

    const store = () => productionRateStore(h.db.forSchema("quotes_fx"));
    const rateOf = async (code: string) => (await store().all()).find((r) => r.currency === code);

    it("pulls {base, rates, timestamp} exactly, strings and numbers alike, with the configured Authorization, into the production table", async () => {
      answer = { status: 200, body: '{"base":"USD","rates":{"EUR":"0.8","MXN":20,"BTC":0.00001},"timestamp":1760000000}' };
      await pullRateFeed({ url, format: "json", authorization: "Bearer k", timeoutMs: 2_000 }, store(), h.clock);
      expect(seenAuth).toBe("Bearer k");
      expect(await rateOf("EUR")).toMatchObject({ usd_value: "1.25", source: "feed", as_of: new Date("2025-10-09T08:53:20.000Z") });
      expect((await rateOf("MXN"))!.usd_value).toBe("0.05");
      expect((await rateOf("BTC"))!.usd_value).toBe("100000");
    });

    it("never replaces a rate with an older one", async () => {
      answer = { status: 200, body: '{"base":"USD","rates":{"EUR":"0.5"},"timestamp":1750000000}' };
      await pullRateFeed({ url, format: "json", timeoutMs: 2_000 }, store(), h.clock);
      expect((await rateOf("EUR"))!.usd_value).toBe("1.25");
    });

    it("rebases a non-USD feed through its USD rate", () => {
      const t = parseFeed({ base: "EUR", rates: { USD: "1.25", GBP: "0.8" } }, new Date());
      expect(t.usdValue.get("EUR")!.toString()).toBe("1.25");
      expect(t.usdValue.get("GBP")!.toString()).toBe("1.5625");
    });

    it("fails a pull on an error status or a malformed body, and records nothing of it", async () => {
      const before = await store().all();
      answer = { status: 500, body: "{}" };
      await expect(pullRateFeed({ url, format: "json", timeoutMs: 2_000 }, store(), h.clock)).rejects.toMatchObject({ code: "RATES_UNAVAILABLE", outcome: "UNAVAILABLE" });
      answer = { status: 200, body: '{"base":"USD","rates":{"EUR":"-1"},"timestamp":1790000000}' };
      await expect(pullRateFeed({ url, format: "json", timeoutMs: 2_000 }, store(), h.clock)).rejects.toMatchObject({ code: "RATES_UNAVAILABLE" });
      answer = { status: 200, body: "<gesmes:Envelope" };
      await expect(pullRateFeed({ url, format: "ecb-xml", timeoutMs: 2_000 }, store(), h.clock)).rejects.toMatchObject({ code: "RATES_UNAVAILABLE" });
      expect(await store().all()).toEqual(before);
    });
  });
});
