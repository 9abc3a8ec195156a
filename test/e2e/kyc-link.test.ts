import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { individual, uniq } from "./customers-fixtures.js";
import { mode, skipReason, startTestSystem, type Caller, type TestSystem } from "./harness.js";

/**
 * POST /customers/{id}/kyc-link (issue 10): a single-use hosted verification page served by
 * Corridor outside the Basic-auth API. Creating the link changes nothing; completing the page runs
 * the sandbox suffix rule, once.
 */
describe.skipIf(skipReason())(`hosted KYC link (${mode})`, () => {
  let system: TestSystem;
  let p: Caller;

  beforeAll(async () => {
    system = await startTestSystem();
    p = await system.createPlatform({ name: "KYC link e2e" });
  });
  afterAll(async () => {
    await system?.stop();
  });

  const customer = async (extra: Record<string, unknown> = {}) => {
    const res = await p.call("POST", "/customers", individual({ platformCustomerId: uniq("kyc"), ...extra }));
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body;
  };
  const link = async (customerId: string, body?: unknown) => {
    const res = await p.call("POST", `/customers/${customerId}/kyc-link`, body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body as { kycUrl: string; expiresAt: string; customerId: string };
  };
  /** The page path (the link's URL without this server's origin). */
  const pathOf = (kycUrl: string) => new URL(kycUrl).pathname;
  const open = (kycUrl: string) => system.raw("GET", pathOf(kycUrl));
  const complete = (kycUrl: string) =>
    system.raw("POST", pathOf(kycUrl), { body: "", headers: { "content-type": "application/x-www-form-urlencoded" } });
  const statusOf = async (id: string) => (await p.call("GET", `/customers/${id}`)).body.kycStatus;

  it("issues a single-use link to a page on this server; only completing the page changes the status (sandbox suffix rule)", async () => {
    const c = await customer({ fullName: "Alice Smith" });
    const l = await link(c.id);
    expect(l.customerId).toBe(c.id);
    expect(l.kycUrl).toMatch(new RegExp(`^${system.url.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}/kyc/[A-Za-z0-9_-]{43}$`));
    expect(new Date(l.expiresAt).getTime()).toBeGreaterThan(Date.now() + 23 * 3600_000);
    expect(await statusOf(c.id)).toBe("UNVERIFIED");

    const page = await open(l.kycUrl);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    expect(page.body).toContain("Alice Smith");
    expect(await statusOf(c.id)).toBe("UNVERIFIED"); // reading the page changes nothing

    const done = await complete(l.kycUrl);
    expect(done.status).toBe(200);
    expect(done.body).toContain(">APPROVED<");
    expect(await statusOf(c.id)).toBe("APPROVED");
    const verifications = await p.call("GET", `/verifications?customerId=${encodeURIComponent(c.id)}`);
    expect(verifications.body.data.map((v: { verificationStatus: string }) => v.verificationStatus)).toEqual(["APPROVED"]);

    // Single use: the page and its completion answer 410 from now on.
    expect((await open(l.kycUrl)).status).toBe(410);
    expect((await complete(l.kycUrl)).status).toBe(410);
    // The customer is decided: no new link.
    const again = await p.call("POST", `/customers/${c.id}/kyc-link`);
    expect(again.status).toBe(400);
    expect(again.body.code).toBe("CUSTOMER_ALREADY_APPROVED");
  });

  it("applies the suffix outcomes on completion: 001 PENDING, 002 REJECTED", async () => {
    for (const [name, status] of [["Pat Pending001", "PENDING"], ["Rex Rejected002", "REJECTED"]] as const) {
      const c = await customer({ fullName: name });
      const l = await link(c.id, { redirectUrl: "https://platform.example/after-kyc" });
      expect(await statusOf(c.id)).toBe("UNVERIFIED");
      const done = await complete(l.kycUrl);
      expect(done.status).toBe(200);
      expect(done.body).toContain(`>${status}<`);
      expect(done.body).toContain('href="https://platform.example/after-kyc"');
      expect(await statusOf(c.id)).toBe(status);
    }
  });

  it("takes Grid's redirectUri (an https URL) and carries it into the link flow; refuses http to a public host, a non-URL and a redirectUrl that differs", async () => {
    const c = await customer({ fullName: "Ray Redirect" });
    const l = await link(c.id, { redirectUri: "https://app.example.com/onboarding/completed" });
    const done = await complete(l.kycUrl);
    expect(done.status).toBe(200);
    expect(done.body).toContain('href="https://app.example.com/onboarding/completed"');
    const local = await customer();
    const dev = await link(local.id, { redirectUri: "http://localhost:3000/done" });
    expect((await complete(dev.kycUrl)).body).toContain('href="http://localhost:3000/done"');
    const other = await customer();
    for (const body of [{ redirectUri: "http://app.example.com/done" }, { redirectUri: "not a url" }, { redirectUri: "https://a.example/x", redirectUrl: "https://b.example/y" }]) {
      const res = await p.call("POST", `/customers/${other.id}/kyc-link`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe("INVALID_INPUT");
      expect([...new Set(res.body.details.errors.map((e: { field: string }) => e.field))]).toEqual(["body.redirectUri"]);
    }
  });

  it("keeps the link open and the status unchanged while the customer lacks data", async () => {
    const c = await customer({ birthDate: undefined });
    const l = await link(c.id);
    const done = await complete(l.kycUrl);
    expect(done.status).toBe(200);
    expect(done.body).toContain("More information is needed");
    expect(done.body).toContain("birthDate");
    expect(await statusOf(c.id)).toBe("UNVERIFIED");
    expect((await open(l.kycUrl)).status).toBe(200);
    expect((await p.call("PATCH", `/customers/${c.id}`, { birthDate: "1990-04-01" })).status).toBe(200);
    expect((await complete(l.kycUrl)).status).toBe(200);
    expect(await statusOf(c.id)).toBe("APPROVED");
  });

  it("voids a customer's older open link when a new one is issued, and refuses unknown tokens", async () => {
    const c = await customer();
    const first = await link(c.id);
    const second = await link(c.id);
    expect(second.kycUrl).not.toBe(first.kycUrl);
    expect((await open(first.kycUrl)).status).toBe(410);
    expect((await complete(first.kycUrl)).status).toBe(410);
    expect(await statusOf(c.id)).toBe("UNVERIFIED");
    expect((await open(second.kycUrl)).status).toBe(200);
    expect((await system.raw("GET", `/kyc/${"A".repeat(43)}`)).status).toBe(404);
    expect((await system.raw("POST", "/kyc/not-a-token", { body: "", headers: { "content-type": "application/x-www-form-urlencoded" } })).status).toBe(404);
  });

  it("refuses unknown, deleted and regulated production platforms' customers and a bad redirectUrl, in the error shape", async () => {
    const unknown = await p.call("POST", "/customers/Customer:0190aaaa-0000-7000-8000-000000000000/kyc-link");
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe("USER_NOT_FOUND");
    const c = await customer();
    const bad = await p.call("POST", `/customers/${c.id}/kyc-link`, { redirectUrl: "javascript:alert(1)" });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe("INVALID_INPUT");
    expect(bad.body.details.errors.map((e: { field: string }) => e.field)).toEqual(["body.redirectUrl"]);
    const l = await link(c.id);
    expect((await p.call("DELETE", `/customers/${c.id}`)).status).toBe(200);
    expect((await open(l.kycUrl)).status).toBe(410);
    expect((await p.call("POST", `/customers/${c.id}/kyc-link`)).status).toBe(410);
    // A regulated production platform runs its own KYC: no link (production links: kyc-review.test.ts).
    const prod = await system.createPlatform({ name: "KYC link prod", environment: "PRODUCTION", regulated: true });
    const pc = await prod.call("POST", "/customers", individual({ platformCustomerId: uniq("kyc-prod") }));
    const refused = await prod.call("POST", `/customers/${pc.body.id}/kyc-link`);
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe("KYC_MANAGED_BY_PLATFORM");
    expect(await (async () => (await prod.call("GET", `/customers/${pc.body.id}`)).body.kycStatus)()).toBe("UNVERIFIED");
  });
});
