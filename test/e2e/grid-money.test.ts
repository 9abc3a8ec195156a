import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifiedCustomer } from "./customers-fixtures.js";
import { eventually, mode, skipReason, startTestSystem, type Caller, type TestSystem } from "./harness.js";
import { fund, iban, platformAccount, platformExternal, txStatus, usdAccountInfo } from "./ledger-helpers.js";

/**
 * Issue 10, the money side: fields Grid's schema requires on transactions, internal accounts,
 * external accounts, exchange rates and the sandbox, through the public API.
 */
describe.skipIf(skipReason())(`Grid money fields (${mode})`, () => {
  let system: TestSystem;
  let p: Caller;
  let usd: any;
  let customer: any;
  let customerUsd: { id: string };
  let hooks: Server;
  let hookUrl: string;

  beforeAll(async () => {
    system = await startTestSystem();
    p = await system.createPlatform();
    usd = await platformAccount(p);
    await fund(p, usd.id, 1_000_000);
    customer = await verifiedCustomer(p, { currencies: ["USD"] });
    customerUsd = await eventually(async () => {
      const res = await p.call("GET", `/customers/internal-accounts?customerId=${customer.id}&type=INTERNAL_FIAT`);
      return res.body.data?.[0];
    });
    hooks = createServer((req, res) => {
      req.resume();
      req.on("end", () => res.writeHead(200, { "content-type": "application/json" }).end('{"received":true}'));
    });
    await new Promise<void>((r) => hooks.listen(0, "127.0.0.1", () => r()));
    hookUrl = `http://127.0.0.1:${(hooks.address() as AddressInfo).port}/hooks`;
  }, 120_000);
  afterAll(async () => {
    await system?.stop();
    await new Promise<void>((r) => (hooks ? hooks.close(() => r()) : r()));
  });

  it("gives every transaction a direction: DEBIT for a transfer-out, CREDIT for a transfer-in", async () => {
    const ext = await platformExternal(p, "000");
    const out = await p.call("POST", "/transfer-out", { source: { accountId: usd.id }, destination: { accountId: ext.id }, amount: 300 });
    expect(out.status, JSON.stringify(out.body)).toBe(201);
    expect(out.body).toMatchObject({ type: "OUTGOING", direction: "DEBIT" });
    const into = await p.call("POST", "/transfer-in", { source: { accountId: ext.id }, destination: { accountId: usd.id }, amount: 400 });
    expect(into.status, JSON.stringify(into.body)).toBe(201);
    expect(into.body).toMatchObject({ type: "INCOMING", direction: "CREDIT" });
    expect((await txStatus(p, into.body.id, "COMPLETED")).direction).toBe("CREDIT");
    const list = await p.call("GET", "/transactions?limit=100");
    expect(list.body.data.every((t: any) => t.direction === (t.type === "INCOMING" ? "CREDIT" : "DEBIT"))).toBe(true);
  });

  it("answers an internal account's status and totalBalance (spendable plus held)", async () => {
    const ext = await platformExternal(p, "005"); // stays in flight: its money stays held
    const before = (await p.call("GET", `/platform/internal-accounts?currency=USD`)).body.data[0];
    expect(before).toMatchObject({ status: "ACTIVE", totalBalance: { amount: before.balance.amount, currency: { code: "USD" } } });
    const out = await p.call("POST", "/transfer-out", { source: { accountId: usd.id }, destination: { accountId: ext.id }, amount: 700 });
    expect(out.status, JSON.stringify(out.body)).toBe(201);
    const after = (await p.call("GET", `/platform/internal-accounts?currency=USD`)).body.data[0];
    expect(after.balance.amount).toBe(before.balance.amount - 700);
    expect(after.totalBalance.amount).toBe(before.balance.amount);
    const funded = await fund(p, usd.id, 1);
    expect(funded).toMatchObject({ status: "ACTIVE", totalBalance: { amount: after.totalBalance.amount + 1 } });
  });

  it("accepts accountInfo.countries and paymentRails as Grid's SDK sends them and answers rails on USD and EUR accounts", async () => {
    const sdk = await p.call("POST", "/platform/external-accounts", { currency: "USD", accountInfo: usdAccountInfo("000", { countries: ["US"], paymentRails: ["ACH", "RTP"] }) });
    expect(sdk.status, JSON.stringify(sdk.body)).toBe(201);
    expect(sdk.body.accountInfo).toMatchObject({ countries: ["US"], paymentRails: ["ACH", "RTP"] });
    const plain = await platformExternal(p, "000");
    expect(plain.accountInfo.paymentRails).toEqual(["ACH", "WIRE"]);
    const eur = await p.call("POST", "/platform/external-accounts", {
      currency: "EUR",
      accountInfo: { accountType: "EUR_ACCOUNT", iban: iban("DE", "370400440532013000"), beneficiary: { beneficiaryType: "INDIVIDUAL", fullName: "Ada Lovelace" } },
    });
    expect(eur.status, JSON.stringify(eur.body)).toBe(201);
    expect((await p.call("GET", `/platform/external-accounts/${eur.body.id}`)).body.accountInfo.paymentRails).toEqual(["SEPA", "SEPA_INSTANT"]);
    const bad = await p.call("POST", "/platform/external-accounts", { currency: "USD", accountInfo: usdAccountInfo("000", { paymentRails: ["SEPA"] }) });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe("INVALID_INPUT");
    expect(JSON.stringify(bad.body.details)).toContain("paymentRails");
  });

  it("answers Grid's ExchangeRate: default sending amount, rail, bounds and fees {fixed, total}", async () => {
    const res = await p.call("GET", "/exchange-rates?sourceCurrency=USD&destinationCurrency=EUR");
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const [eur] = res.body.data;
    expect(eur).toMatchObject({
      sourceCurrency: { code: "USD" },
      destinationCurrency: { code: "EUR" },
      sendingAmount: 10000,
      minSendingAmount: expect.any(Number),
      maxSendingAmount: expect.any(Number),
      destinationPaymentRail: "SEPA_INSTANT",
      receivingAmount: expect.any(Number),
      fees: { fixed: expect.any(Number), total: expect.any(Number) },
      updatedAt: expect.any(String),
    });
    expect(eur.fees.total).toBe(eur.fees.fixed + 10); // + round(10000 × 0.001)
    expect(eur.minSendingAmount).toBeLessThanOrEqual(eur.maxSendingAmount);
    const asked = (await p.call("GET", "/exchange-rates?sourceCurrency=USD&destinationCurrency=EUR&sendingAmount=25000")).body.data[0];
    expect(asked.sendingAmount).toBe(25000);
    expect(asked.receivingAmount).toBeGreaterThan(eur.receivingAmount);
  });

  it("POST /sandbox/uma/receive addressed by customerId credits that customer", async () => {
    const res = await p.call("POST", "/sandbox/uma/receive", { senderUmaAddress: "$bob@sender.example", customerId: customer.id, receivingCurrencyCode: "USD", receivingCurrencyAmount: 4_321 });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ type: "INCOMING", direction: "CREDIT", customerId: customer.id, receivedAmount: { amount: 4_321 } });
    expect(res.body.destination.accountId).toBe(customerUsd.id);
    const unknown = await p.call("POST", "/sandbox/uma/receive", { senderUmaAddress: "$bob@sender.example", customerId: "Customer:0190f0f0-0000-7000-8000-000000000000", receivingCurrencyCode: "USD", receivingCurrencyAmount: 1 });
    expect(unknown.status).toBe(404);
    const neither = await p.call("POST", "/sandbox/uma/receive", { senderUmaAddress: "$bob@sender.example", receivingCurrencyCode: "USD", receivingCurrencyAmount: 1 });
    expect(neither.status).toBe(400);
  });

  it("POST /sandbox/send takes Grid's currencyAmount", async () => {
    const payee = await p.call("POST", "/customers/external-accounts", { customerId: customer.id, currency: "USD", accountInfo: usdAccountInfo("000") });
    expect(payee.status, JSON.stringify(payee.body)).toBe(201);
    const realtime = async () => {
      const q = await p.call("POST", "/quotes", {
        source: { sourceType: "REALTIME_FUNDING", customerId: customer.id, currency: "USD" },
        destination: { destinationType: "ACCOUNT", accountId: payee.body.id },
        lockedCurrencySide: "SENDING",
        lockedCurrencyAmount: 5_000,
      });
      expect(q.status, JSON.stringify(q.body)).toBe(201);
      return q.body;
    };
    const q = await realtime();
    const wrong = await p.call("POST", "/sandbox/send", { quoteId: q.id, currencyCode: "USD", currencyAmount: q.totalSendingAmount - 1 });
    expect(wrong.status).toBe(400);
    const disagree = await p.call("POST", "/sandbox/send", { quoteId: q.id, currencyCode: "USD", currencyAmount: q.totalSendingAmount, amount: 1 });
    expect(disagree.status).toBe(400);
    const paid = await p.call("POST", "/sandbox/send", { quoteId: q.id, currencyCode: "USD", currencyAmount: q.totalSendingAmount });
    expect(paid.status, JSON.stringify(paid.body)).toBe(200);
    expect(paid.body).toMatchObject({ id: q.transactionId, direction: "DEBIT" });
  });

  it("POST /sandbox/webhooks/test answers {url, response_status, response_body}", async () => {
    expect((await p.call("PATCH", "/config", { webhookEndpoint: hookUrl })).status).toBe(200);
    const res = await eventually(async () => {
      const r = await p.call("POST", "/sandbox/webhooks/test");
      return r.status === 200 && r.body.response_status === 200 ? r : undefined;
    });
    // Grid's TestWebhookResponse and nothing else (issue 27).
    expect(res.body).toEqual({ url: hookUrl, response_status: 200, response_body: '{"received":true}' });
  });

  it("answers settledAt while a payment is in flight: when the sandbox's schedule settles it", async () => {
    const ext = await platformExternal(p, "005"); // in flight 30 sandbox seconds, then fails
    const out = await p.call("POST", "/transfer-out", { source: { accountId: usd.id }, destination: { accountId: ext.id }, amount: 250 });
    expect(out.status, JSON.stringify(out.body)).toBe(201);
    const inFlight = await eventually(async () => {
      const t = (await p.call("GET", `/transactions/${out.body.id}`)).body;
      return t.status === "PROCESSING" && t.settledAt ? t : undefined;
    });
    const ahead = Date.parse(inFlight.settledAt) - Date.parse(inFlight.createdAt);
    expect(ahead).toBeGreaterThanOrEqual(29_000);
    expect(ahead).toBeLessThanOrEqual(35_000);
    expect((await p.call("POST", "/sandbox/clock/advance", { seconds: 31 })).status).toBe(200);
    const failed = await txStatus(p, out.body.id, "FAILED");
    expect(failed.settledAt).toBeUndefined();
  });

  it("GET /quotes lists the platform's quotes with Grid's filters and the list envelope", async () => {
    const all = await p.call("GET", "/quotes?limit=100");
    expect(all.status, JSON.stringify(all.body)).toBe(200);
    expect(all.body).toMatchObject({ hasMore: false, totalCount: expect.any(Number) });
    expect(all.body.data.length).toBeGreaterThan(0);
    expect(all.body.data.every((q: any) => q.id.startsWith("Quote:"))).toBe(true);
    const mine = await p.call("GET", `/quotes?customerId=${customer.id}&status=COMPLETED&createdAfter=2020-01-01T00:00:00Z`);
    expect(mine.status).toBe(200);
    expect(mine.body.data.every((q: any) => q.status === "COMPLETED" && q.source.customerId === customer.id)).toBe(true);
    const paged = await p.call("GET", "/quotes?limit=1");
    expect(paged.body.data).toHaveLength(1);
    if (all.body.totalCount > 1) expect(paged.body).toMatchObject({ hasMore: true, nextCursor: expect.any(String) });
    expect((await p.call("GET", "/quotes?status=DONE")).status).toBe(400);
  });

  it("GET /uma-providers answers the sandbox's providers, filtered by countryCode and currencyCode", async () => {
    const res = await p.call("GET", "/uma-providers?countryCode=MX&currencyCode=MXN");
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ hasMore: false, totalCount: 1, data: [{ domain: "sandbox.uma.money", allowListStatus: true, supportedRegions: expect.arrayContaining(["MX", "US"]) }] });
    expect(res.body.data[0].supportedCurrencies.map((c: any) => c.code)).toEqual(["EUR", "MXN", "USD"]);
    expect((await p.call("GET", "/uma-providers?countryCode=BR")).body).toMatchObject({ data: [], totalCount: 0 });
    expect((await p.call("GET", "/uma-providers?countryCode=mexico")).status).toBe(400);
    // Production platforms in a deployment without a UMA connector: a 400 naming the missing rail (never 501), documented on the route.
    const prod = await system.createPlatform({ environment: "PRODUCTION" });
    const none = await prod.call("GET", "/uma-providers");
    expect(none.status).toBe(400);
    expect(none.body).toMatchObject({ code: "PAYMENT_RAIL_NOT_AVAILABLE", details: { paymentRail: "UMA" } });
    const lookup = await prod.call("GET", "/receiver/uma/$alice@example.com?senderUmaAddress=$bob@acme.example");
    expect(lookup.status).toBe(400);
    expect(lookup.body).toMatchObject({ code: "PAYMENT_RAIL_NOT_AVAILABLE", details: { paymentRail: "UMA" } });
  });

  it.each([
    ["$refunded.usd", { status: "REFUNDED", failureReason: "OFFRAMP_FAILED", refund: { status: "COMPLETED" } }],
    ["$fail.lnurlp.usd", { status: "FAILED", failureReason: "LNURLP_FAILED", refund: { status: "COMPLETED" } }],
    ["$fail.payeedata.usd", { status: "FAILED", failureReason: "MISSING_MANDATORY_PAYEE_DATA", refund: { status: "COMPLETED" } }],
  ])("reaches the sandbox outcome of %s@sandbox.uma.money, and the money comes back", async (user, expected) => {
    await fund(p, customerUsd.id, 10_000);
    const balance = async () => (await p.call("GET", `/customers/internal-accounts?customerId=${customer.id}&type=INTERNAL_FIAT`)).body.data[0].balance.amount;
    const before = await balance();
    const lookup = await p.call("GET", `/receiver/uma/${encodeURIComponent(`${user}@sandbox.uma.money`)}?customerId=${customer.id}`);
    expect(lookup.status, JSON.stringify(lookup.body)).toBe(200);
    const q = await p.call("POST", "/quotes", {
      source: { sourceType: "ACCOUNT", accountId: customerUsd.id },
      destination: { destinationType: "UMA_ADDRESS", currency: "USD" },
      lookupId: lookup.body.lookupId,
      senderCustomerInfo: { FULL_NAME: "Alice Smith" },
      lockedCurrencySide: "SENDING",
      lockedCurrencyAmount: 1_000,
      immediatelyExecute: true,
    });
    expect(q.status, JSON.stringify(q.body)).toBe(201);
    const t = await eventually(async () => {
      const res = (await p.call("GET", `/transactions/${q.body.transactionId}`)).body;
      return res.status === expected.status && res.refund?.status === "COMPLETED" ? res : undefined;
    });
    expect(t).toMatchObject(expected);
    expect(await balance()).toBe(before);
  });

  it("a receiver lookup made for a customer opens a CREATED transaction (no reconciliationInstructions, no money) that its quote adopts as PENDING; one never quoted ends EXPIRED with the lookup", async () => {
    const balance = async () => (await p.call("GET", `/customers/internal-accounts?customerId=${customer.id}&type=INTERNAL_FIAT`)).body.data[0].balance.amount;
    await fund(p, customerUsd.id, 5_000);
    const before = await balance();
    const lookupOf = async () => {
      const res = await p.call("GET", `/receiver/uma/${encodeURIComponent("$success.usd@sandbox.uma.money")}?customerId=${customer.id}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.lookupId as string;
    };
    const createdIds = async () => ((await p.call("GET", `/transactions?status=CREATED&customerId=${customer.id}&limit=100`)).body.data as any[]).map((t) => t.id);
    const earlier = new Set(await createdIds());
    const lookupId = await lookupOf();
    const listed = await p.call("GET", `/transactions?status=CREATED&customerId=${customer.id}&limit=100`);
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    const created = (listed.body.data as any[]).filter((t) => !earlier.has(t.id));
    expect(created).toHaveLength(1);
    expect(created[0]).toMatchObject({ status: "CREATED", type: "OUTGOING", customerId: customer.id, direction: "DEBIT" });
    // Issue 27: the CREATED transaction names the account the money would come from.
    expect(created[0].source).toMatchObject({ accountId: customerUsd.id });
    expect((await p.call("GET", `/transactions/${created[0].id}`)).body.source).toMatchObject({ accountId: customerUsd.id });
    expect(created[0].reconciliationInstructions).toBeUndefined();
    expect(await balance()).toBe(before);

    const q = await p.call("POST", "/quotes", {
      source: { sourceType: "ACCOUNT", accountId: customerUsd.id },
      destination: { destinationType: "UMA_ADDRESS", currency: "USD" },
      lookupId,
      senderCustomerInfo: { FULL_NAME: "Alice Smith" },
      lockedCurrencySide: "SENDING",
      lockedCurrencyAmount: 1_000,
    });
    expect(q.status, JSON.stringify(q.body)).toBe(201);
    expect(q.body.transactionId).toBe(created[0].id);
    const pending = (await p.call("GET", `/transactions/${created[0].id}`)).body;
    expect(pending).toMatchObject({ status: "PENDING", reconciliationInstructions: { reference: expect.any(String) } });
    expect(await createdIds()).not.toContain(created[0].id);

    // A lookup nobody quotes: EXPIRED once the lookup has expired (5 minutes on the platform's clock).
    const unused = await lookupOf();
    const open = (await createdIds()).filter((id) => !earlier.has(id));
    expect(open).toHaveLength(1);
    expect((await p.call("POST", "/sandbox/clock/advance", { seconds: 301 })).status).toBe(200);
    const expired = await txStatus(p, open[0]!, "EXPIRED");
    expect(expired.reconciliationInstructions).toMatchObject({ reference: expect.any(String) });
    expect(expired.failureReason).toBeUndefined();
    expect(unused).toMatch(/^Lookup:/);
    expect(await balance()).toBe(before);
  });
});
