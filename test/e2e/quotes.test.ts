import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifiedCustomer } from "./customers-fixtures.js";
import { eventually, mode, skipReason, startTestSystem, type Caller, type TestSystem } from "./harness.js";
import { advanceClock, fund, iban, usdAccountInfo } from "./ledger-helpers.js";

// Issue 5 part 2 through the gateway: the quote lifecycle with the real ledger, sandbox rail and auth-sessions.
// The sandbox rate table is frozen (drift 0) so the amounts below are computed by hand (services/quotes-fx/README.md).
process.env.CORRIDOR_FX_SANDBOX_DRIFT_BPS = "0";

/** A sandbox platform with USD/EUR/USDC, a verified customer with funded USD and USDC accounts, and an EUR payee. */
async function setupPlatform(system: TestSystem) {
  const p = await system.createPlatform();
  const cfg = (await p.call("GET", "/config")).body;
  const usd = cfg.supportedCurrencies[0];
  const supportedCurrencies = [usd, { ...usd, currencyCode: "EUR" }, { ...usd, currencyCode: "USDC" }];
  expect((await p.call("PATCH", "/config", { supportedCurrencies })).status).toBe(200);

  const customerId: string = (await verifiedCustomer(p, { currencies: ["USD", "USDC"] })).id;
  const accounts = await eventually(async () => {
    const res = await p.call("GET", `/customers/internal-accounts?customerId=${customerId}`);
    return res.body.data?.length === 3 ? res.body.data : undefined;
  });
  const fiat: { id: string } = accounts.find((a: any) => a.type === "INTERNAL_FIAT");
  const wallet: { id: string } = accounts.find((a: any) => a.type === "EMBEDDED_WALLET");
  await fund(p, fiat.id, 1_000_000);
  await fund(p, wallet.id, 100_000_000); // 100 USDC (6 decimals)
  const ext = await p.call("POST", "/customers/external-accounts", { customerId, currency: "EUR", accountInfo: { accountType: "EUR_ACCOUNT", iban: iban("DE", "370400440532013000") } });
  expect(ext.status, JSON.stringify(ext.body)).toBe(201);
  return { p, customerId, fiat, wallet, payee: ext.body as { id: string } };
}

describe.skipIf(skipReason())(`quotes lifecycle through the gateway (${mode})`, () => {
  let system: TestSystem;
  let p: Caller;
  let customerId: string;
  let fiat: { id: string };
  let wallet: { id: string };
  let payee: { id: string };

  beforeAll(async () => {
    system = await startTestSystem();
    ({ p, customerId, fiat, wallet, payee } = await setupPlatform(system));
  }, 120_000);
  afterAll(async () => system?.stop());

  const quote = (over: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
    p.call("POST", "/quotes", { source: { sourceType: "ACCOUNT", accountId: fiat.id }, destination: { destinationType: "ACCOUNT", accountId: payee.id }, lockedCurrencySide: "SENDING", lockedCurrencyAmount: 10_000, ...over }, headers);
  const execute = (id: string, headers: Record<string, string> = {}) => p.call("POST", `/quotes/${id}/execute`, undefined, headers);

  // USD → EUR: market 1.08 × 1.002 = 1.08216; fees 10 fixed + round(10000 × 0.001) = 10 + ceil(25 × 1.08216) = 28 → 48.
  it("locks SENDING: 100.00 USD buys 91.96 EUR for 0.48 of fees; the quote lives 5 minutes with a PENDING transaction", async () => {
    const res = await quote();
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const q = res.body;
    expect(q).toMatchObject({
      status: "PENDING",
      totalSendingAmount: 10_000,
      totalReceivingAmount: 9_196,
      feesIncluded: 48,
      exchangeRate: 1.08216,
      sendingCurrency: { code: "USD" },
      receivingCurrency: { code: "EUR" },
      source: { sourceType: "ACCOUNT", accountId: fiat.id, customerId },
      rateDetails: { counterpartyMultiplier: 1, counterpartyFixedFee: 25, serviceApiMultiplier: 1.002, serviceApiFixedFee: 10, serviceApiVariableFeeRate: 0.001, serviceApiVariableFeeAmount: 10 },
    });
    expect(q.paymentInstructions).toBeUndefined();
    expect(q.payloadToSign).toBeUndefined();
    expect(Date.parse(q.expiresAt) - Date.parse(q.createdAt)).toBe(300_000);
    const got = await p.call("GET", `/quotes/${q.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(q);
    const tx = await p.call("GET", `/transactions/${q.transactionId}`);
    expect(tx.status).toBe(200);
    expect(tx.body).toMatchObject({ status: "PENDING", type: "OUTGOING", quoteId: q.id });
    // A Transaction shows the service's four rate-detail fields only, as numbers.
    expect(tx.body.rateDetails).toEqual({ serviceApiMultiplier: 1.002, serviceApiFixedFee: 10, serviceApiVariableFeeRate: 0.001, serviceApiVariableFeeAmount: 10 });
  });

  // RECEIVING 9196: T = ceil(9196 × 1.08216) + 10 + 28 = 9990; s − round(s × 0.001) ≥ 9990 first at s = 10000.
  it("an amount that does not cover the fees is 400 AMOUNT_OUT_OF_RANGE naming body.lockedCurrencyAmount", async () => {
    const res = await quote({ lockedCurrencyAmount: 30 });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: "AMOUNT_OUT_OF_RANGE", details: { field: "body.lockedCurrencyAmount" } });
  });

  it("locks RECEIVING: 91.96 EUR costs exactly 100.00 USD", async () => {
    const res = await quote({ lockedCurrencySide: "RECEIVING", lockedCurrencyAmount: 9_196 });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({ totalSendingAmount: 10_000, totalReceivingAmount: 9_196, feesIncluded: 48, lockedCurrencySide: "RECEIVING" });
  });

  it("executes from the funded account once: replay with the same key, then 409 INVALID_STATE_TRANSITION", async () => {
    const before = (await p.call("GET", `/customers/internal-accounts?customerId=${customerId}`)).body.data.find((a: any) => a.id === fiat.id).balance.amount;
    const q = (await quote()).body;
    const first = await execute(q.id, { "idempotency-key": `exec-${q.id}` });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(["PROCESSING", "COMPLETED"]).toContain(first.body.status);
    const replay = await execute(q.id, { "idempotency-key": `exec-${q.id}` });
    expect(replay.status).toBe(200);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body).toEqual(first.body);
    const again = await execute(q.id);
    expect(again.status).toBe(409);
    expect(again.body.code).toBe("INVALID_STATE_TRANSITION");
    expect(again.headers.get("x-should-retry")).toBe("false");
    const tx = await eventually(async () => {
      const res = await p.call("GET", `/transactions/${q.transactionId}`);
      return ["PROCESSING", "COMPLETED"].includes(res.body.status) ? res.body : undefined;
    });
    expect(tx.id).toBe(q.transactionId);
    const after = (await p.call("GET", `/customers/internal-accounts?customerId=${customerId}`)).body.data.find((a: any) => a.id === fiat.id).balance.amount;
    expect(before - after).toBe(10_000);
    // The quote follows its transaction.
    await eventually(async () => {
      const res = await p.call("GET", `/quotes/${q.id}`);
      return res.body.status === tx.status || res.body.status === "COMPLETED" ? res.body : undefined;
    });
  });

  it("replays POST /quotes with the same Idempotency-Key, and refuses the key with another body", async () => {
    const key = `create-${Date.now()}`;
    const a = await quote({}, { "idempotency-key": key });
    const b = await quote({}, { "idempotency-key": key });
    expect(b.status).toBe(201);
    expect(b.headers.get("idempotent-replayed")).toBe("true");
    expect(b.body.id).toBe(a.body.id);
    const c = await quote({ lockedCurrencyAmount: 10_001 }, { "idempotency-key": key });
    expect(c.status).toBe(422);
    expect(c.body.code).toBe("IDEMPOTENCY_KEY_REUSED");
  });

  it("immediatelyExecute answers the executed quote", async () => {
    const res = await quote({ immediatelyExecute: true });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(["PROCESSING", "COMPLETED"]).toContain(res.body.status);
  });

  it("pays out to external accounts only: an internal account destination is 400 naming the field, and nothing is created", async () => {
    const before = (await p.call("GET", `/transactions?customerId=${customerId}&limit=100`)).body.totalCount;
    const res = await quote({ destination: { destinationType: "ACCOUNT", accountId: fiat.id } });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("INVALID_INPUT");
    expect(res.body.details.errors.map((e: { field: string }) => e.field)).toEqual(["body.destination.accountId"]);
    expect((await p.call("GET", `/transactions?customerId=${customerId}&limit=100`)).body.totalCount).toBe(before);
  });

  it("an unknown quote is 404 QUOTE_NOT_FOUND", async () => {
    const res = await p.call("GET", "/quotes/Quote:0190f0f0-0000-7000-8000-000000000000");
    expect(res.status).toBe(404);
    expect(res.body.code).toBe("QUOTE_NOT_FOUND");
  });

  it("expires on the platform's sandbox clock: advancing it 301 s expires the quote and its transaction, and execute is 409 QUOTE_EXPIRED", async () => {
    // A platform of its own: moving its sandbox clock must not touch the other tests' quotes.
    const own = await setupPlatform(system);
    const balance = async () => (await own.p.call("GET", `/customers/internal-accounts?customerId=${own.customerId}`)).body.data.find((a: any) => a.id === own.fiat.id).balance.amount;
    const before = await balance();
    const res = await own.p.call("POST", "/quotes", { source: { sourceType: "ACCOUNT", accountId: own.fiat.id }, destination: { destinationType: "ACCOUNT", accountId: own.payee.id }, lockedCurrencySide: "SENDING", lockedCurrencyAmount: 10_000 });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const q = res.body;
    expect((await own.p.call("GET", `/quotes/${q.id}`)).body.status).toBe("PENDING");
    await advanceClock(own.p, 301);
    const got = await own.p.call("GET", `/quotes/${q.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ status: "EXPIRED", failureReason: "QUOTE_EXPIRED" });
    const refused = await own.p.call("POST", `/quotes/${q.id}/execute`);
    expect(refused.status, JSON.stringify(refused.body)).toBe(409);
    expect(refused.body.code).toBe("QUOTE_EXPIRED");
    expect(refused.headers.get("x-should-retry")).toBe("false");
    const tx = await own.p.call("GET", `/transactions/${q.transactionId}`);
    expect(tx.body).toMatchObject({ status: "EXPIRED", failureReason: "QUOTE_EXPIRED" });
    expect(await balance()).toBe(before);
  }, 120_000);

  describe("the quote follows its transaction (ledger events)", () => {
    const quoteStatus = (id: string, status: string) =>
      eventually(async () => {
        const res = await p.call("GET", `/quotes/${id}`);
        return res.body.status === status ? res.body : undefined;
      });

    it("a payout that completes makes the quote COMPLETED", async () => {
      const q = (await quote()).body;
      expect((await execute(q.id)).status).toBe(200);
      const done = await quoteStatus(q.id, "COMPLETED");
      expect(done.failureReason).toBeUndefined();
    });

    it("a payout that fails (sandbox IBAN suffix 002) makes the quote FAILED with the transaction's reason", async () => {
      const ext = await p.call("POST", "/customers/external-accounts", { customerId, currency: "EUR", accountInfo: { accountType: "EUR_ACCOUNT", iban: iban("DE", "370400440532013002") } });
      expect(ext.status, JSON.stringify(ext.body)).toBe(201);
      const q = (await quote({ destination: { destinationType: "ACCOUNT", accountId: ext.body.id } })).body;
      expect((await execute(q.id)).status).toBe(200);
      const failed = await quoteStatus(q.id, "FAILED");
      const tx = (await p.call("GET", `/transactions/${q.transactionId}`)).body;
      expect(tx.status).toBe("FAILED");
      expect(tx.failureReason).toBeTruthy();
      expect(failed.failureReason).toBe(tx.failureReason);
    });

    it("pays a sandbox UMA receiver: lookup, quote to UMA_ADDRESS, execute, COMPLETED", async () => {
      const lookup = await p.call("GET", `/receiver/uma/${encodeURIComponent("$success.eur@sandbox.uma.money")}?customerId=${customerId}`);
      expect(lookup.status, JSON.stringify(lookup.body)).toBe(200);
      const res = await quote({ destination: { destinationType: "UMA_ADDRESS", currency: "EUR" }, lookupId: lookup.body.lookupId, senderCustomerInfo: { FULL_NAME: "Alice Smith" } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body.destination).toMatchObject({ destinationType: "UMA_ADDRESS", umaAddress: "$success.eur@sandbox.uma.money" });
      expect((await execute(res.body.id)).status).toBe(200);
      await quoteStatus(res.body.id, "COMPLETED");
    });
  });

  describe("embedded wallet", () => {
    it("returns payloadToSign, refuses immediatelyExecute, and executes only with a signature", async () => {
      const fromWallet = { source: { sourceType: "ACCOUNT", accountId: wallet.id }, lockedCurrencyAmount: 10_000_000 };
      const refused = await quote({ ...fromWallet, immediatelyExecute: true });
      expect(refused.status).toBe(400);
      const res = await quote(fromWallet);
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      const q = res.body;
      expect(q.sendingCurrency.code).toBe("USDC");
      expect(typeof q.payloadToSign).toBe("string");
      expect(JSON.parse(q.payloadToSign)).toMatchObject({ accountId: wallet.id, operation: "EXECUTE_QUOTE" });
      const unsigned = await execute(q.id);
      expect(unsigned.status).toBe(401);
      expect(unsigned.body.code).toBe("WALLET_SIGNATURE_MISSING");
      const forged = await execute(q.id, { "service-wallet-signature": "not-a-signature" });
      expect(forged.status).toBe(401);
      const signed = await execute(q.id, { "grid-wallet-signature": "sandbox-valid-signature" });
      expect(signed.status, JSON.stringify(signed.body)).toBe(200);
      expect(["PROCESSING", "COMPLETED"]).toContain(signed.body.status);
    });
  });

  describe("embedded wallet on a platform left at its defaults (USD only)", () => {
    it("quotes from the customer's USDC wallet without the platform listing USDC", async () => {
      const fresh = await system.createPlatform();
      expect((await fresh.call("GET", "/config")).body.supportedCurrencies.map((c: { currencyCode: string }) => c.currencyCode)).toEqual(["USD"]);
      const id: string = (await verifiedCustomer(fresh)).id;
      const wallet = await eventually(async () => {
        const res = await fresh.call("GET", `/customers/internal-accounts?customerId=${id}`);
        return res.body.data?.find((a: { type: string }) => a.type === "EMBEDDED_WALLET");
      });
      expect(wallet.balance.currency.code).toBe("USDC");
      await fund(fresh, wallet.id, 50_000_000);
      const payee = await fresh.call("POST", "/customers/external-accounts", { customerId: id, currency: "EUR", accountInfo: { accountType: "EUR_ACCOUNT", iban: iban("DE", "370400440532013000") } });
      expect(payee.status, JSON.stringify(payee.body)).toBe(201);
      const res = await fresh.call("POST", "/quotes", {
        source: { sourceType: "ACCOUNT", accountId: wallet.id },
        destination: { destinationType: "ACCOUNT", accountId: payee.body.id },
        lockedCurrencySide: "SENDING",
        lockedCurrencyAmount: 10_000_000,
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body).toMatchObject({ sendingCurrency: { code: "USDC" }, totalSendingAmount: 10_000_000 });
      // A fiat account in a currency the platform does not list is still refused.
      const usd = (await fresh.call("GET", `/customers/internal-accounts?customerId=${id}`)).body.data.find((a: { type: string }) => a.type === "INTERNAL_FIAT");
      expect(usd.balance.currency.code).toBe("USD");
    });
  });

  describe("counterparty information the platform requires", () => {
    it("is taken from the destination account's beneficiary; the request may add to it or override it", async () => {
      const cp = await system.createPlatform();
      const cfg = (await cp.call("GET", "/config")).body.supportedCurrencies;
      const required = [{ name: "FULL_NAME", mandatory: true }, { name: "NATIONALITY", mandatory: true }];
      expect((await cp.call("PATCH", "/config", { supportedCurrencies: cfg.map((c: object) => ({ ...c, requiredCounterpartyFields: required })) })).status).toBe(200);
      const id: string = (await verifiedCustomer(cp)).id;
      const account = await eventually(async () => (await cp.call("GET", `/customers/internal-accounts?customerId=${id}&currency=USD`)).body.data?.[0]);
      await fund(cp, account.id, 100_000);
      const payee = await cp.call("POST", "/customers/external-accounts", { customerId: id, currency: "USD", accountInfo: usdAccountInfo("000", { beneficiary: { beneficiaryType: "INDIVIDUAL", fullName: "Ada Lovelace", nationality: "GB" } }) });
      expect(payee.status, JSON.stringify(payee.body)).toBe(201);
      const body = { source: { sourceType: "ACCOUNT", accountId: account.id }, destination: { destinationType: "ACCOUNT", accountId: payee.body.id, paymentRail: "ACH" }, lockedCurrencySide: "SENDING", lockedCurrencyAmount: 1_000 };
      const derived = await cp.call("POST", "/quotes", body);
      expect(derived.status, JSON.stringify(derived.body)).toBe(201);
      expect(derived.body.counterpartyInformation).toEqual({ FULL_NAME: "Ada Lovelace", NATIONALITY: "GB" });
      const overridden = await cp.call("POST", "/quotes", { ...body, counterpartyInformation: { FULL_NAME: "Ada King" } });
      expect(overridden.body.counterpartyInformation).toEqual({ FULL_NAME: "Ada King", NATIONALITY: "GB" });
      // A beneficiary without a nationality: the request must give it.
      const bare = await cp.call("POST", "/customers/external-accounts", { customerId: id, currency: "USD", accountInfo: usdAccountInfo("001") });
      const missing = await cp.call("POST", "/quotes", { ...body, destination: { ...body.destination, accountId: bare.body.id } });
      expect(missing.status).toBe(400);
      expect(missing.body.code).toBe("MISSING_MANDATORY_USER_INFO");
      expect(missing.body.details.errors.map((e: { field: string }) => e.field)).toEqual(["body.counterpartyInformation.NATIONALITY"]);
    });
  });

  describe("real-time funding", () => {
    const realtime = () => quote({ source: { sourceType: "REALTIME_FUNDING", customerId, currency: "USD" } });

    it("carries payment instructions; /sandbox/send refuses the wrong currency or amount, then the quote proceeds", async () => {
      const res = await realtime();
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      const q = res.body;
      expect(q.paymentInstructions).toHaveLength(1);
      expect(q.paymentInstructions[0]).toMatchObject({ amount: 10_000, currency: "USD", accountOrWalletInfo: { accountType: "USD_ACCOUNT" } });
      const wrongCurrency = await p.call("POST", "/sandbox/send", { quoteId: q.id, currencyCode: "EUR" });
      expect(wrongCurrency.status).toBe(400);
      const wrongAmount = await p.call("POST", "/sandbox/send", { quoteId: q.id, currencyCode: "USD", amount: 9_999 });
      expect(wrongAmount.status).toBe(400);
      const paid = await p.call("POST", "/sandbox/send", { quoteId: q.id, currencyCode: "USD" }, { "idempotency-key": `send-${q.id}` });
      expect(paid.status, JSON.stringify(paid.body)).toBe(200);
      expect(paid.body.id).toBe(q.transactionId);
      expect(["PROCESSING", "COMPLETED"]).toContain(paid.body.status);
      // Let the payout finish, then replay: the answer is the first one as it was (decisions §3).
      await eventually(async () => ((await p.call("GET", `/transactions/${q.transactionId}`)).body.status === "COMPLETED" ? true : undefined));
      const replay = await p.call("POST", "/sandbox/send", { quoteId: q.id, currencyCode: "USD" }, { "idempotency-key": `send-${q.id}` });
      expect(replay.headers.get("idempotent-replayed")).toBe("true");
      expect(replay.body).toEqual(paid.body);
      expect((await p.call("GET", `/transactions/${q.transactionId}`)).body.status).toBe("COMPLETED");
    });

    it("is for sandbox platforms only", async () => {
      const prod = await system.createPlatform({ environment: "PRODUCTION" });
      const res = await prod.call("POST", "/sandbox/send", { quoteId: "Quote:0190f0f0-0000-7000-8000-000000000000", currencyCode: "USD" });
      expect(res.status).toBe(403);
    });
  });
  describe("another platform", () => {
    it("sees none of this platform's quotes, transactions, accounts or lookups (404), and changes nothing", async () => {
      const other = await system.createPlatform();
      const q = (await quote()).body;
      const fundedQuote = (await quote({ source: { sourceType: "REALTIME_FUNDING", customerId, currency: "USD" } })).body;
      const checks: [string, string, unknown?][] = [
        ["GET", `/quotes/${q.id}`],
        ["POST", `/quotes/${q.id}/execute`],
        ["GET", `/transactions/${q.transactionId}`],
        ["POST", `/transactions/${q.transactionId}/approve`, { receiverCustomerInfo: {} }],
        ["POST", `/transactions/${q.transactionId}/reject`, { reason: "no" }],
        ["POST", "/sandbox/send", { quoteId: fundedQuote.id, currencyCode: "USD" }],
        ["GET", `/receiver/external-account/${payee.id}?senderUmaAddress=${encodeURIComponent("$alice@sender.example")}`],
        ["POST", "/quotes", { source: { sourceType: "ACCOUNT", accountId: fiat.id }, destination: { destinationType: "ACCOUNT", accountId: payee.id }, lockedCurrencySide: "SENDING", lockedCurrencyAmount: 1_000 }],
      ];
      for (const [method, path, body] of checks) {
        const res = await other.call(method, path, body);
        expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBe(404);
      }
      expect((await p.call("GET", `/quotes/${q.id}`)).body.status).toBe("PENDING");
      expect((await p.call("GET", `/quotes/${fundedQuote.id}`)).body.status).toBe("PENDING");
    });
  });
});
