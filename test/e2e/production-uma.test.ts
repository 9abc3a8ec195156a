import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { individual, uniq } from "./customers-fixtures.js";
import { eventually, mode, skipReason, startTestSystem, type TestSystem } from "./harness.js";

/**
 * Production platforms have a UMA identity (issue 29, item 6): a domain of their own under the
 * operator's CORRIDOR_UMA_DOMAIN (unset here: uma.localhost), and their customers addresses under
 * it, by the same scheme as sandbox customers'. Customers created while their platform had no
 * domain get theirs once it has one (how the customers of platforms created before this change are
 * backfilled; the platforms themselves by auth-sessions' uma-domain-backfill worker).
 */
describe.skipIf(skipReason())(`production UMA identity (${mode})`, () => {
  let system: TestSystem;

  beforeAll(async () => {
    system = await startTestSystem();
  });
  afterAll(async () => {
    await system?.stop();
  });

  const suffixOf = (platformId: string) => platformId.replace(/[^0-9a-f]/gi, "").slice(-8).toLowerCase();

  it("a production platform created by the operator has <slug>-<8 hex>.<operator domain>, and its customers $<platformCustomerId>@<that domain>", async () => {
    const p = await system.createPlatform({ name: "Prod Bank E2E", environment: "PRODUCTION" });
    const config = await p.call("GET", "/config");
    expect(config.status, JSON.stringify(config.body)).toBe(200);
    const domain = `prod-bank-e2e-${suffixOf(p.platformId)}.uma.localhost`;
    expect(config.body.umaDomain).toBe(domain);

    const id = uniq("Ada.Prod");
    const customer = await p.call("POST", "/customers", individual({ platformCustomerId: id }));
    expect(customer.status, JSON.stringify(customer.body)).toBe(201);
    expect(customer.body.umaAddress).toBe(`$${id.toLowerCase()}@${domain}`);
    const found = await p.call("GET", `/customers?umaAddress=${encodeURIComponent(customer.body.umaAddress)}`);
    expect(found.body.data.map((c: { id: string }) => c.id)).toEqual([customer.body.id]);
  });

  it("customers created while the platform had no UMA domain get their default address once it has one; addresses already given stay", async () => {
    const p = await system.createPlatform({ name: "Late Domain", environment: "PRODUCTION" });
    expect((await p.call("PATCH", "/config", { umaDomain: null })).status).toBe(200);
    const id = uniq("late");
    const before = await p.call("POST", "/customers", individual({ platformCustomerId: id }));
    expect(before.status, JSON.stringify(before.body)).toBe(201);
    expect(before.body.umaAddress).toBeUndefined();

    expect((await p.call("PATCH", "/config", { umaDomain: "pay.late-domain.example" })).status).toBe(200);
    const after = await eventually(async () => {
      const res = await p.call("GET", `/customers/${before.body.id}`);
      return res.body.umaAddress ? res.body : undefined;
    });
    expect(after.umaAddress).toBe(`$${id.toLowerCase()}@pay.late-domain.example`);

    expect((await p.call("PATCH", "/config", { umaDomain: "pay.other.example" })).status).toBe(200);
    const other = await p.call("POST", "/customers", individual());
    expect(other.body.umaAddress).toMatch(/@pay\.other\.example$/);
    expect((await p.call("GET", `/customers/${before.body.id}`)).body.umaAddress).toBe(`$${id.toLowerCase()}@pay.late-domain.example`);
  });
});
