import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { business, individual } from "./customers-fixtures.js";
import { mode, skipReason, startTestSystem, type Caller, type TestSystem } from "./harness.js";
import { balanceOf, fund, platformAccount, usdAccountInfo } from "./ledger-helpers.js";

/** What a Grid integrator sends and expects back (issue 10): beneficiaries, tokens, invitations, config, owners. */
describe.skipIf(skipReason())(`Grid parity (${mode})`, () => {
  let system: TestSystem;
  let p: Caller;

  beforeAll(async () => {
    system = await startTestSystem();
    p = await system.createPlatform({ name: "Grid parity e2e" });
  });
  afterAll(async () => {
    await system?.stop();
  });

  const fieldsOf = (body: any): string[] => (body.details?.errors ?? []).map((e: { field: string }) => e.field);

  describe("BUSINESS beneficiaries on external accounts", () => {
    const business = {
      beneficiaryType: "BUSINESS",
      legalName: "Acme Payouts LLC",
      registrationNumber: "REG-77",
      taxId: "12-3456789",
      email: "treasury@acme.example",
      phoneNumber: "+14155550123",
      countryOfResidence: "US",
      address: { line1: "1 Main St", city: "San Francisco", state: "CA", postalCode: "94105", country: "US" },
    };

    it("registers the platform's own payout account with a business beneficiary, stored and answered as sent", async () => {
      const created = await p.call("POST", "/platform/external-accounts", { currency: "USD", accountInfo: usdAccountInfo("000", { beneficiary: business }) });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      expect(created.body.accountInfo.beneficiary).toEqual(business);
      // Name verification checks the business's legal name.
      expect(created.body).toMatchObject({ beneficiaryVerificationStatus: "MATCHED", beneficiaryVerifiedData: { fullName: "Acme Payouts LLC" } });
      const read = await p.call("GET", `/platform/external-accounts/${created.body.id}`);
      expect(read.body.accountInfo.beneficiary).toEqual(business);
    });

    it("registers a customer's account with a business beneficiary and keeps the individual shape working", async () => {
      const customer = (await p.call("POST", "/customers", individual())).body;
      const biz = await p.call("POST", "/customers/external-accounts", { customerId: customer.id, currency: "USD", accountInfo: usdAccountInfo("000", { beneficiary: business }) });
      expect(biz.status, JSON.stringify(biz.body)).toBe(201);
      expect((await p.call("GET", `/customers/external-accounts/${biz.body.id}`)).body.accountInfo.beneficiary).toEqual(business);
      const person = { beneficiaryType: "INDIVIDUAL", fullName: "Ada Lovelace", birthDate: "1815-12-10", nationality: "GB", countryOfResidence: "GB", email: "ada@example.com" };
      const ind = await p.call("POST", "/customers/external-accounts", { customerId: customer.id, currency: "USD", accountInfo: usdAccountInfo("000", { beneficiary: person }) });
      expect(ind.status, JSON.stringify(ind.body)).toBe(201);
      expect(ind.body.accountInfo.beneficiary).toEqual(person);
    });

    it("answers 400 INVALID_INPUT naming the field for a business without legalName or with an individual's field, and stores nothing", async () => {
      const before = (await p.call("GET", "/platform/external-accounts?limit=1")).body.totalCount;
      const noName = await p.call("POST", "/platform/external-accounts", { currency: "USD", accountInfo: usdAccountInfo("000", { beneficiary: { beneficiaryType: "BUSINESS", taxId: "1" } }) });
      expect(noName.status).toBe(400);
      expect(noName.body.code).toBe("INVALID_INPUT");
      expect(fieldsOf(noName.body)).toEqual(["body.accountInfo.beneficiary.legalName"]);
      const mixed = await p.call("POST", "/platform/external-accounts", {
        currency: "USD",
        accountInfo: usdAccountInfo("000", { beneficiary: { beneficiaryType: "BUSINESS", legalName: "Acme", birthDate: "1990-01-01" } }),
      });
      expect(mixed.status).toBe(400);
      expect(fieldsOf(mixed.body)).toEqual(["body.accountInfo.beneficiary.birthDate"]);
      expect((await p.call("GET", "/platform/external-accounts?limit=1")).body.totalCount).toBe(before);
    });
  });

  describe("answers about the request itself (issue 27)", () => {
    it("answers a served path with another method 405 METHOD_NOT_ALLOWED with an Allow header", async () => {
      const res = await p.call("DELETE", "/customers");
      expect(res.status).toBe(405);
      expect(res.body).toMatchObject({ status: 405, code: "METHOD_NOT_ALLOWED", details: { method: "DELETE", allowed: ["GET", "POST"] } });
      expect(res.headers.get("allow")).toBe("GET, POST");
      const one = await p.call("PUT", "/transactions/Transaction:0190a000-0000-7000-8000-000000000000");
      expect(one.status).toBe(405);
      expect(one.headers.get("allow")).toBe("GET");
    });

    it("answers an unknown sub-path 404 NOT_FOUND, not a 400 about an id pattern, and keeps 400 for a malformed id", async () => {
      for (const path of ["/customers/not-a-route", "/transactions/whatever", "/quotes/Quote:0190a000-0000-7000-8000-000000000000/nothing"]) {
        const res = await p.call("GET", path);
        expect(res.status, path).toBe(404);
        expect(res.body.code, path).toBe("NOT_FOUND");
      }
      const malformed = await p.call("GET", "/customers/Customer:not-hex");
      expect(malformed.status).toBe(400);
      expect(fieldsOf(malformed.body)).toEqual(["params.customerId"]);
    });

    it("serves GET /customers/end-user-terms: 404 END_USER_TERMS_NOT_CONFIGURED where the operator publishes no terms (the default), never a 501 nor the 400 of a customer id", async () => {
      const res = await p.call("GET", "/customers/end-user-terms");
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ status: 404, code: "END_USER_TERMS_NOT_CONFIGURED" });
      expect(res.body.message).toContain("CORRIDOR_END_USER_TERMS_URL");
    });

    it("answers a JSON route sent another content type 415 naming application/json, and creates nothing", async () => {
      const before = (await p.call("GET", "/customers?limit=1")).body.totalCount;
      const auth = `Basic ${Buffer.from(`${p.clientId}:${p.clientSecret}`).toString("base64")}`;
      for (const type of ["text/plain", "application/x-www-form-urlencoded", "application/xml"]) {
        const res = await system.raw("POST", "/2025-10-13/customers", { body: JSON.stringify(individual()), headers: { authorization: auth, "content-type": type } });
        expect(res.status, type).toBe(415);
        expect(res.body).toMatchObject({ code: "UNSUPPORTED_MEDIA_TYPE", details: { expected: "application/json", received: type } });
        expect(res.body.message).toContain("application/json");
      }
      expect((await p.call("GET", "/customers?limit=1")).body.totalCount).toBe(before);
    });
  });

  describe("requests Grid's clients send (issue 27)", () => {
    it("stores and answers businessInfo.country (Grid's name for countryOfIncorporation), on create and patch", async () => {
      const created = await p.call("POST", "/customers", business({ businessInfo: { legalName: "Acme GmbH", country: "DE" } }));
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      expect(created.body.businessInfo).toMatchObject({ legalName: "Acme GmbH", country: "DE", countryOfIncorporation: "DE" });
      expect((await p.call("GET", `/customers/${created.body.id}`)).body.businessInfo).toMatchObject({ country: "DE" });
      const patched = await p.call("PATCH", `/customers/${created.body.id}`, { businessInfo: { country: "FR" } });
      expect(patched.status, JSON.stringify(patched.body)).toBe(200);
      expect(patched.body.businessInfo).toMatchObject({ legalName: "Acme GmbH", country: "FR", countryOfIncorporation: "FR" });
      const both = await p.call("POST", "/customers", business({ businessInfo: { legalName: "Acme", country: "DE", countryOfIncorporation: "FR" } }));
      expect(both.status).toBe(400);
      expect(fieldsOf(both.body)).toEqual(["body.businessInfo.country"]);
      const bad = await p.call("POST", "/customers", business({ businessInfo: { legalName: "Acme", country: "Germany" } }));
      expect(bad.status).toBe(400);
      expect(fieldsOf(bad.body)).toEqual(["body.businessInfo.country"]);
    });

    it("pays out over destination.paymentRail when it is one of the external account's rails, and refuses another without holding anything", async () => {
      const usd = await platformAccount(p);
      await fund(p, usd.id, 10_000);
      const ext = await p.call("POST", "/platform/external-accounts", { currency: "USD", accountInfo: usdAccountInfo("000", { paymentRails: ["ACH", "RTP"] }) });
      expect(ext.status, JSON.stringify(ext.body)).toBe(201);
      const rtp = await p.call("POST", "/transfer-out", { source: { accountId: usd.id }, destination: { accountId: ext.body.id, paymentRail: "RTP" }, amount: 100 });
      expect(rtp.status, JSON.stringify(rtp.body)).toBe(201);
      expect(rtp.body.destination).toMatchObject({ accountId: ext.body.id, paymentRail: "RTP" });
      const plain = await p.call("POST", "/transfer-out", { source: { accountId: usd.id }, destination: { accountId: ext.body.id }, amount: 100 });
      expect(plain.status).toBe(201);
      expect(plain.body.destination).toMatchObject({ paymentRail: "ACH" });
      const before = await balanceOf(p);
      const wire = await p.call("POST", "/transfer-out", { source: { accountId: usd.id }, destination: { accountId: ext.body.id, paymentRail: "WIRE" }, amount: 100 });
      expect(wire.status).toBe(400);
      expect(wire.body.code).toBe("INVALID_INPUT");
      expect(fieldsOf(wire.body)).toEqual(["body.destination.paymentRail"]);
      expect(wire.body.message).toContain("ACH, RTP");
      expect(await balanceOf(p)).toBe(before);
      // transfer-in takes no rail.
      const into = await p.call("POST", "/transfer-in", { source: { accountId: ext.body.id, paymentRail: "ACH" }, destination: { accountId: usd.id }, amount: 100 });
      expect(into.status).toBe(400);
    });
  });

  describe("platform config", () => {
    it("answers proxyUmaSubdomain and webhookEndpoint as null while unset, and the endpoint once set", async () => {
      const fresh = await system.createPlatform({ name: "Grid parity config" });
      const before = await fresh.call("GET", "/config");
      expect(before.status).toBe(200);
      expect(before.body).toHaveProperty("proxyUmaSubdomain", null);
      expect(before.body).toHaveProperty("webhookEndpoint", null);
      const set = await fresh.call("PATCH", "/config", { webhookEndpoint: "https://hooks.example.com/corridor" });
      expect(set.status, JSON.stringify(set.body)).toBe(200);
      expect(set.body).toMatchObject({ webhookEndpoint: "https://hooks.example.com/corridor", proxyUmaSubdomain: null });
    });
  });
});
