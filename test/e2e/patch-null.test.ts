import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { business, expectInvalid, individual } from "./customers-fixtures.js";
import { mode, skipReason, startTestSystem, type Caller, type TestSystem } from "./harness.js";

/**
 * PATCH routes read null as JSON merge-patch does (issue 29, item 4): null removes a field the
 * resource can be without, and GET then shows it cleared; a field that cannot be removed refuses
 * null with 400 INVALID_INPUT naming it, and nothing changes (docs/errors.md, "null in a PATCH").
 */
describe.skipIf(skipReason())(`PATCH with null (${mode})`, () => {
  let system: TestSystem;
  let platform: Caller;

  beforeAll(async () => {
    system = await startTestSystem();
    platform = await system.createPlatform({ name: "Patch null e2e" });
  });
  afterAll(async () => {
    await system?.stop();
  });

  it("PATCH /config {webhookEndpoint: null} clears the endpoint and GET /config then shows null", async () => {
    const set = await platform.call("PATCH", "/config", { webhookEndpoint: "https://hooks.example.com/corridor" });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body.webhookEndpoint).toBe("https://hooks.example.com/corridor");

    const cleared = await platform.call("PATCH", "/config", { webhookEndpoint: null });
    expect(cleared.status, JSON.stringify(cleared.body)).toBe(200);
    expect(cleared.body.webhookEndpoint).toBeNull();
    expect((await platform.call("GET", "/config")).body.webhookEndpoint).toBeNull();
  });

  it("PATCH /config with null clears umaDomain and the passkey relying party (with its origins)", async () => {
    const set = await platform.call("PATCH", "/config", {
      umaDomain: "pay.example.com",
      passkeyRelyingPartyId: "wallet.example.com",
      passkeyOrigins: ["https://wallet.example.com"],
    });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body).toMatchObject({ umaDomain: "pay.example.com", passkeyRelyingPartyId: "wallet.example.com" });

    const cleared = await platform.call("PATCH", "/config", { umaDomain: null, passkeyRelyingPartyId: null, passkeyOrigins: null });
    expect(cleared.status, JSON.stringify(cleared.body)).toBe(200);
    const got = (await platform.call("GET", "/config")).body;
    expect(got.umaDomain).toBeUndefined();
    expect(got.passkeyRelyingPartyId).toBeUndefined();
    expect(got.passkeyOrigins).toBeUndefined();
  });

  it("PATCH /config {supportedCurrencies: null} answers 400 naming the field and changes nothing", async () => {
    const before = (await platform.call("GET", "/config")).body;
    expectInvalid(await platform.call("PATCH", "/config", { supportedCurrencies: null, webhookEndpoint: null }), "body.supportedCurrencies");
    expect((await platform.call("GET", "/config")).body).toEqual(before);
  });

  it("PATCH /customers/{id} and /beneficial-owners/{id} refuse null with 400 naming the field, and change nothing", async () => {
    const customer = await platform.call("POST", "/customers", individual());
    expect(customer.status, JSON.stringify(customer.body)).toBe(201);
    expectInvalid(await platform.call("PATCH", `/customers/${customer.body.id}`, { email: null, region: null }), "body.email", "body.region");
    expect((await platform.call("GET", `/customers/${customer.body.id}`)).body).toEqual(customer.body);

    const biz = await platform.call("POST", "/customers", business());
    expect(biz.status, JSON.stringify(biz.body)).toBe(201);
    const owner = await platform.call("POST", "/beneficial-owners", {
      customerId: biz.body.id,
      roles: ["UBO"],
      ownershipPercentage: 30,
      personalInfo: {
        firstName: "Olga",
        lastName: "Owner",
        birthDate: "1980-01-01",
        nationality: "US",
        address: { line1: "1 Main St", postalCode: "94105", country: "US" },
        idType: "SSN",
        identifier: "123-45-6789",
      },
    });
    expect(owner.status, JSON.stringify(owner.body)).toBe(201);
    expectInvalid(await platform.call("PATCH", `/beneficial-owners/${owner.body.id}`, { personalInfo: { email: null } }), "body.personalInfo.email");
    expect((await platform.call("GET", `/beneficial-owners/${owner.body.id}`)).body).toEqual(owner.body);
  });

  it("PATCH /agents/{id} refuses null name with 400 naming the field", async () => {
    const customer = await platform.call("POST", "/customers", individual());
    const created = await platform.call("POST", "/agents", { name: "Null agent", customerId: customer.body.id });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expectInvalid(await platform.call("PATCH", `/agents/${created.body.agent.id}`, { name: null }), "body.name");
    expect((await platform.call("GET", `/agents/${created.body.agent.id}`)).body.name).toBe("Null agent");
  });
});
