import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifiedCustomer } from "./customers-fixtures.js";
import { eventually, mode, skipReason, startTestSystem, type Caller, type TestSystem } from "./harness.js";
import { fund, iban, platformAccount, platformExternal, txStatus, usdAccountInfo } from "./ledger-helpers.js";

/**
 * Issue 27, Grid's discovery and transaction routes: GET /discoveries, GET /vasps,
 * POST /transactions/{id}/cancel and POST /transactions/{id}/confirm, as a Grid integrator calls
 * them. Every answer is also checked against the served OpenAPI by the harness.
 */
describe.skipIf(skipReason())(`Grid discoveries, VASPs, cancel and confirm (${mode})`, () => {
  let system: TestSystem;
  let p: Caller;

  beforeAll(async () => {
    system = await startTestSystem();
    p = await system.createPlatform({ name: "Grid discover e2e" });
    const base = (await p.call("GET", "/config")).body.supportedCurrencies[0];
    const supportedCurrencies = [
      { ...base, currencyCode: "USD" },
      { ...base, currencyCode: "EUR" },
      // BRL can only be received here: no payout rail may be discovered for it.
      { ...base, currencyCode: "BRL", enabledTransactionTypes: ["INCOMING"] },
    ];
    const patched = await p.call("PATCH", "/config", { supportedCurrencies });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
  }, 120_000);
  afterAll(async () => system?.stop());

  describe("GET /discoveries", () => {
    it("answers Grid's DiscoveryListResponse: the rails of the currencies the platform pays out in, per country", async () => {
      const res = await p.call("GET", "/discoveries");
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const data = res.body.data as Record<string, string>[];
      expect(data.length).toBeGreaterThan(0);
      for (const d of data) {
        // Grid's required fields, all strings.
        for (const f of ["bankName", "displayName", "country", "currency"]) expect(typeof d[f], `${f} of ${JSON.stringify(d)}`).toBe("string");
        expect(d.country).toMatch(/^[A-Z]{2}$/);
      }
      const currencies = new Set(data.map((d) => d.currency));
      expect([...currencies].sort()).toEqual(["EUR", "USD"]); // not BRL: OUTGOING is not enabled for it
      expect(data.filter((d) => d.country === "US").map((d) => d.bankName).sort()).toEqual(["ACH", "FEDNOW", "RTP", "WIRE"]);
      expect(data.find((d) => d.country === "DE" && d.bankName === "SEPA_INSTANT")).toMatchObject({ currency: "EUR", paymentRail: "SEPA_INSTANT", accountType: "EUR_ACCOUNT" });
    });

    it("filters by country and currency; a bad code is 400 INVALID_INPUT", async () => {
      const us = await p.call("GET", "/discoveries?country=US&currency=USD");
      expect(us.status).toBe(200);
      expect(us.body.data.every((d: any) => d.country === "US" && d.currency === "USD")).toBe(true);
      expect(us.body.data.length).toBe(4);
      expect((await p.call("GET", "/discoveries?country=US&currency=EUR")).body.data).toEqual([]);
      expect((await p.call("GET", "/discoveries?currency=BRL")).body.data).toEqual([]);
      const bad = await p.call("GET", "/discoveries?country=usa");
      expect(bad.status).toBe(400);
      expect(bad.body.code).toBe("INVALID_INPUT");
    });

    it("every discovered rail is one the system accepts: an external account on it is created and a transfer-out over it goes", async () => {
      const all = (await p.call("GET", "/discoveries")).body.data as { currency: string; paymentRail?: string; accountType: string; bankName: string; country: string }[];
      const usd = await platformAccount(p);
      await fund(p, usd.id, 100_000);
      for (const d of all.filter((x) => x.country === "US" || x.country === "DE")) {
        const accountInfo =
          d.accountType === "USD_ACCOUNT"
            ? usdAccountInfo("000", { paymentRails: [d.paymentRail], bankName: d.bankName })
            : { accountType: "EUR_ACCOUNT", iban: iban("DE", "370400440532013000"), bankName: d.bankName, paymentRails: [d.paymentRail], countries: [d.country] };
        const ext = await p.call("POST", "/platform/external-accounts", { currency: d.currency, accountInfo });
        expect(ext.status, `${d.bankName}: ${JSON.stringify(ext.body)}`).toBe(201);
        if (d.currency === "USD") {
          const out = await p.call("POST", "/transfer-out", { source: { accountId: usd.id }, destination: { accountId: ext.body.id, paymentRail: d.paymentRail }, amount: 100 });
          expect(out.status, `${d.bankName}: ${JSON.stringify(out.body)}`).toBe(201);
          expect(out.body.destination.paymentRail ?? d.paymentRail).toBe(d.paymentRail);
        }
      }
    }, 120_000);

    it("a production platform discovers only the rails the operator bound (none here)", async () => {
      const prod = await system.createPlatform({ environment: "PRODUCTION", name: "Grid discover prod" });
      const res = await prod.call("GET", "/discoveries");
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual([]);
    });
  });

  describe("GET /vasps", () => {
    it("answers Grid's VaspListResponse; this deployment configures no directory, so it is empty", async () => {
      const res = await p.call("GET", "/vasps");
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toEqual({ data: [], hasMore: false, totalCount: 0 });
      expect((await p.call("GET", "/vasps?search=kraken&limit=5")).body).toEqual({ data: [], hasMore: false, totalCount: 0 });
      const bad = await p.call("GET", "/vasps?limit=0");
      expect(bad.status).toBe(400);
      expect(bad.body.code).toBe("INVALID_INPUT");
      expect((await p.call("GET", "/vasps?cursor=not-ours")).body.code).toBe("INVALID_INPUT");
    });
  });

  describe("POST /transactions/{transactionId}/cancel", () => {
    it("cancels a PENDING quote before execution: FAILED (CANCELLED), its OUTGOING_PAYMENT_FAILED event, the quote can no longer execute", async () => {
      const customer = await verifiedCustomer(p, { currencies: ["USD"] });
      const account = await eventually(async () => (await p.call("GET", `/customers/internal-accounts?customerId=${customer.id}&type=INTERNAL_FIAT`)).body.data?.[0]);
      await fund(p, account.id, 10_000);
      const payee = await p.call("POST", "/customers/external-accounts", { customerId: customer.id, currency: "EUR", accountInfo: { accountType: "EUR_ACCOUNT", iban: iban("DE", "370400440532013000") } });
      expect(payee.status, JSON.stringify(payee.body)).toBe(201);
      const q = await p.call("POST", "/quotes", { source: { sourceType: "ACCOUNT", accountId: account.id }, destination: { destinationType: "ACCOUNT", accountId: payee.body.id }, lockedCurrencySide: "SENDING", lockedCurrencyAmount: 1_000 });
      expect(q.status, JSON.stringify(q.body)).toBe(201);

      const res = await p.call("POST", `/transactions/${q.body.transactionId}/cancel`, { reason: "REQUESTED_AFTER_HOURS" });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toMatchObject({ id: q.body.transactionId, status: "FAILED", type: "OUTGOING", failureDetail: "CANCELLED", quoteId: q.body.id });
      const event = await eventually(async () => {
        const list = await p.call("GET", `/events?type=OUTGOING_PAYMENT_FAILED&resourceId=${encodeURIComponent(q.body.transactionId)}`);
        return list.body.data?.[0];
      });
      expect(event.payload.data).toMatchObject({ id: q.body.transactionId, status: "FAILED", failureDetail: "CANCELLED" });
      // quotes-fx follows: the quote is FAILED and does not execute; the money never moved.
      await eventually(async () => ((await p.call("GET", `/quotes/${q.body.id}`)).body.status === "FAILED" ? true : undefined));
      const exec = await p.call("POST", `/quotes/${q.body.id}/execute`, undefined, { "idempotency-key": `cancel-${q.body.id}` });
      expect(exec.status).toBe(409);
      expect((await p.call("GET", `/customers/internal-accounts?customerId=${customer.id}&type=INTERNAL_FIAT`)).body.data[0].balance.amount).toBe(10_000);
      // Twice: it is final now.
      const again = await p.call("POST", `/transactions/${q.body.transactionId}/cancel`);
      expect(again.status).toBe(409);
      expect(again.body.code).toBe("TRANSACTION_NOT_CANCELLABLE");
    }, 120_000);

    it("answers 409 TRANSACTION_NOT_CANCELLABLE once the rail has the transfer, 404 for an unknown one", async () => {
      const usd = await platformAccount(p);
      await fund(p, usd.id, 10_000);
      const ext = await platformExternal(p, "000");
      const out = await p.call("POST", "/transfer-out", { source: { accountId: usd.id }, destination: { accountId: ext.id }, amount: 500 });
      expect(out.status).toBe(201);
      await txStatus(p, out.body.id, "COMPLETED");
      const res = await p.call("POST", `/transactions/${out.body.id}/cancel`);
      expect(res.status).toBe(409);
      expect(res.body).toMatchObject({ status: 409, code: "TRANSACTION_NOT_CANCELLABLE", details: { transactionId: out.body.id, status: "COMPLETED" } });
      const unknown = await p.call("POST", "/transactions/Transaction:019542f5-b3e7-1d02-0000-000000000004/cancel");
      expect(unknown.status).toBe(404);
      expect(unknown.body.code).toBe("TRANSACTION_NOT_FOUND");
    });

    it("a receiver lookup's CREATED transaction names its source account and is not cancellable (no payment yet)", async () => {
      const customer = await verifiedCustomer(p, { currencies: ["USD"] });
      const account = await eventually(async () => (await p.call("GET", `/customers/internal-accounts?customerId=${customer.id}&type=INTERNAL_FIAT`)).body.data?.[0]);
      const lookup = await p.call("GET", `/receiver/uma/${encodeURIComponent("$success.usd@sandbox.uma.money")}?customerId=${customer.id}`);
      expect(lookup.status, JSON.stringify(lookup.body)).toBe(200);
      const created = (await p.call("GET", `/transactions?status=CREATED&customerId=${customer.id}`)).body.data;
      expect(created).toHaveLength(1);
      expect(created[0]).toMatchObject({ status: "CREATED", type: "OUTGOING", source: { accountId: account.id } });
      const res = await p.call("POST", `/transactions/${created[0].id}/cancel`);
      expect(res.status).toBe(409);
      expect(res.body.code).toBe("TRANSACTION_NOT_CANCELLABLE");
    });
  });

  describe("POST /transactions/{transactionId}/confirm", () => {
    it("records Grid's receiptDeliveryConfirmedAt: now without a body, the given time with one, replaced on a second call", async () => {
      const usd = await platformAccount(p);
      await fund(p, usd.id, 1_000);
      const ext = await platformExternal(p, "000");
      const out = await p.call("POST", "/transfer-out", { source: { accountId: usd.id }, destination: { accountId: ext.id }, amount: 100 });
      expect(out.status).toBe(201);
      expect(out.body.receiptDeliveryConfirmedAt).toBeUndefined();
      const before = Date.now();
      const first = await p.call("POST", `/transactions/${out.body.id}/confirm`);
      expect(first.status, JSON.stringify(first.body)).toBe(200);
      expect(first.body.id).toBe(out.body.id);
      expect(Date.parse(first.body.receiptDeliveryConfirmedAt)).toBeGreaterThanOrEqual(before - 5_000);
      const at = "2026-01-02T03:04:05.000Z";
      const second = await p.call("POST", `/transactions/${out.body.id}/confirm`, { receiptDeliveryConfirmedAt: at });
      expect(second.status).toBe(200);
      expect(second.body.receiptDeliveryConfirmedAt).toBe(at);
      expect((await p.call("GET", `/transactions/${out.body.id}`)).body.receiptDeliveryConfirmedAt).toBe(at);
      const bad = await p.call("POST", `/transactions/${out.body.id}/confirm`, { receiptDeliveryConfirmedAt: "yesterday" });
      expect(bad.status).toBe(400);
      expect(bad.body.code).toBe("INVALID_INPUT");
      const unknown = await p.call("POST", "/transactions/Transaction:019542f5-b3e7-1d02-0000-000000000004/confirm", {});
      expect(unknown.status).toBe(404);
      expect(unknown.body.code).toBe("TRANSACTION_NOT_FOUND");
    });
  });
});
