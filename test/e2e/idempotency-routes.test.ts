import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { form as csvForm, HEADER, individualRow } from "./bulk-csv.js";
import { individual, uniq } from "./customers-fixtures.js";
import { mode, skipReason, startTestSystem, type Caller, type TestSystem } from "./harness.js";
import { usdAccountInfo } from "./ledger-helpers.js";

/**
 * Idempotency-Key on every changing route, not only the money-moving ones (docs/idempotency.md):
 * an attacker's test sent 8 concurrent POST /customers/external-accounts with one key and got 8
 * accounts. For each kind of route — a JSON create, an update, a delete, a create whose answer
 * carries a secret, a multipart upload the gateway records, and the bulk CSV upload its service
 * records — 8 concurrent requests with one key have exactly one effect (the resources are listed
 * after), every answer is the first one replayed byte for byte or 409 IDEMPOTENCY_KEY_IN_USE, and
 * the key with another body is 422 IDEMPOTENCY_KEY_REUSED.
 */
describe.skipIf(skipReason())(`Idempotency-Key on every changing route (${mode})`, () => {
  let system: TestSystem;
  let p: Caller;
  let customerId: string;

  beforeAll(async () => {
    system = await startTestSystem();
    p = await system.createPlatform();
    const created = await p.call("POST", "/customers", individual({ currencies: ["USD"] }));
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    customerId = created.body.id;
  }, 120_000);
  afterAll(async () => system?.stop());

  interface RawAnswer {
    status: number;
    replayed: boolean;
    contentType: string | null;
    text: string;
  }

  /** The answer as bytes (not parsed), so a replay can be compared byte for byte. */
  async function send(method: string, path: string, key: string, body?: unknown): Promise<RawAnswer> {
    const headers: Record<string, string> = {
      authorization: `Basic ${Buffer.from(`${p.clientId}:${p.clientSecret}`).toString("base64")}`,
      "idempotency-key": key,
    };
    let payload: string | FormData | undefined;
    if (body instanceof FormData) payload = body;
    else if (body !== undefined) {
      payload = JSON.stringify(body);
      headers["content-type"] = "application/json";
    }
    const res = await fetch(`${system.api}${path}`, { method, headers, body: payload });
    return { status: res.status, replayed: res.headers.get("idempotent-replayed") === "true", contentType: res.headers.get("content-type"), text: await res.text() };
  }

  /**
   * Sends 8 copies at once (`make` builds each body: a FormData cannot be sent twice), then one
   * more after: exactly one answer is a first answer, the other successes replay it byte for
   * byte, the rest are 409 IDEMPOTENCY_KEY_IN_USE, and the late one replays it.
   */
  async function concurrently(method: string, path: string, make: () => unknown, okStatus: number): Promise<RawAnswer> {
    const key = uniq("idem");
    const answers = await Promise.all(Array.from({ length: 8 }, () => send(method, path, key, make())));
    const firsts = answers.filter((a) => a.status === okStatus && !a.replayed);
    expect(firsts, JSON.stringify(answers)).toHaveLength(1);
    const first = firsts[0]!;
    for (const a of answers) {
      if (a === first) continue;
      if (a.status === 409) {
        expect(JSON.parse(a.text)).toMatchObject({ status: 409, code: "IDEMPOTENCY_KEY_IN_USE", details: { idempotencyKey: key } });
        continue;
      }
      expect(a, JSON.stringify(answers)).toEqual({ ...first, replayed: true });
    }
    const late = await send(method, path, key, make());
    expect(late).toEqual({ ...first, replayed: true });
    return first;
  }

  async function expectReused(method: string, path: string, key: string, body: unknown) {
    const res = await send(method, path, key, body);
    expect(res.status, res.text).toBe(422);
    expect(JSON.parse(res.text)).toMatchObject({ status: 422, code: "IDEMPOTENCY_KEY_REUSED", details: { idempotencyKey: key } });
  }

  const count = async (path: string) => {
    const res = await p.call("GET", path);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.totalCount as number;
  };

  it("creates one external account for 8 concurrent POST /customers/external-accounts with one key (the attacker's test)", async () => {
    const list = `/customers/external-accounts?customerId=${encodeURIComponent(customerId)}`;
    const before = await count(list);
    const body = { customerId, currency: "USD", accountInfo: usdAccountInfo("101") };
    const first = await concurrently("POST", "/customers/external-accounts", () => body, 201);
    expect(await count(list)).toBe(before + 1);
    expect(JSON.parse(first.text).id).toMatch(/^ExternalAccount:/);

    // Another body with a used key: 422, and nothing is created.
    const key = uniq("ext");
    expect((await send("POST", "/customers/external-accounts", key, body)).status).toBe(201);
    await expectReused("POST", "/customers/external-accounts", key, { ...body, accountInfo: usdAccountInfo("102") });
    expect(await count(list)).toBe(before + 2);
  });

  it("creates one customer, and one beneficial owner, per key", async () => {
    const pcid = uniq("pc");
    const customer = individual({ platformCustomerId: pcid });
    const first = await concurrently("POST", "/customers", () => customer, 201);
    expect(await count(`/customers?platformCustomerId=${encodeURIComponent(pcid)}`)).toBe(1);
    const biz = JSON.parse(first.text).id as string;

    const business = await p.call("POST", "/customers", {
      customerType: "BUSINESS",
      platformCustomerId: uniq("biz"),
      businessInfo: { legalName: "Acme Inc", registrationNumber: "REG-123", taxId: "12-3456789" },
      address: { line1: "1 Main St", postalCode: "94105", country: "US", city: "San Francisco" },
      region: "US",
    });
    expect(business.status, JSON.stringify(business.body)).toBe(201);
    const owner = {
      customerId: business.body.id,
      roles: ["UBO"],
      ownershipPercentage: 40,
      personalInfo: { firstName: "Jane", lastName: "Doe", birthDate: "1980-01-31", nationality: "US", address: { line1: "2 Market St", postalCode: "94105", country: "US" }, idType: "SSN", identifier: "123-45-6789" },
    };
    await concurrently("POST", "/beneficial-owners", () => owner, 201);
    expect(await count(`/beneficial-owners?customerId=${encodeURIComponent(business.body.id)}`)).toBe(1);
    expect(biz).toMatch(/^Customer:/);
  });

  it("frees the key of a refused request: the corrected request with it runs", async () => {
    const key = uniq("refused");
    const missing = "Customer:0190f0f0-0000-7000-8000-000000000000";
    const refused = await send("POST", "/customers/external-accounts", key, { customerId: missing, currency: "USD", accountInfo: usdAccountInfo("103") });
    expect(refused.status, refused.text).toBe(404);
    const list = `/customers/external-accounts?customerId=${encodeURIComponent(customerId)}`;
    const before = await count(list);
    const corrected = await send("POST", "/customers/external-accounts", key, { customerId, currency: "USD", accountInfo: usdAccountInfo("103") });
    expect(corrected.status, corrected.text).toBe(201);
    expect(corrected.replayed).toBe(false);
    expect(await count(list)).toBe(before + 1);
  });

  it("replays an update (PATCH) and a delete (DELETE) instead of running them again", async () => {
    const created = await p.call("POST", "/customers", individual());
    const id = encodeURIComponent(created.body.id as string);
    const patched = await concurrently("PATCH", `/customers/${id}`, () => ({ fullName: "Alice Replayed" }), 200);
    expect(JSON.parse(patched.text).fullName).toBe("Alice Replayed");
    const key = uniq("patch");
    expect((await send("PATCH", `/customers/${id}`, key, { fullName: "Bob" })).status).toBe(200);
    await expectReused("PATCH", `/customers/${id}`, key, { fullName: "Carol" });
    expect((await p.call("GET", `/customers/${id}`)).body.fullName).toBe("Bob");

    // A soft delete answers 410 CUSTOMER_DELETED the second time: with the key, the first answer.
    const deleted = await concurrently("DELETE", `/customers/${id}`, () => undefined, 200);
    expect(JSON.parse(deleted.text)).toMatchObject({ id: created.body.id, isDeleted: true });
    expect((await p.call("DELETE", `/customers/${id}`)).status).toBe(410);

    const account = await p.call("POST", "/customers/external-accounts", { customerId, currency: "USD", accountInfo: usdAccountInfo("104") });
    expect(account.status, JSON.stringify(account.body)).toBe(201);
    const gone = await concurrently("DELETE", `/customers/external-accounts/${encodeURIComponent(account.body.id)}`, () => undefined, 204);
    expect(gone.text).toBe("");
  });

  it("creates one API token per key and replays its secret only to the same key", async () => {
    const before = await count("/tokens?limit=100");
    const first = await concurrently("POST", "/tokens", () => ({ name: "idempotent", permissions: ["VIEW"] }), 201);
    const token = JSON.parse(first.text);
    expect(token.clientSecret).toEqual(expect.any(String));
    expect(await count("/tokens?limit=100")).toBe(before + 1);
    // The replayed secret is the token's: it authenticates.
    expect((await system.as(token.clientId, token.clientSecret).call("GET", "/config")).status).toBe(200);
  });

  describe("multipart uploads", () => {
    const PDF = Buffer.from("%PDF-1.7\n1 0 obj\n<<>>\nendobj\ntrailer\n<<>>\n%%EOF\n");
    const documentForm = (holder: string, bytes = PDF, name = "passport.pdf") => {
      const f = new FormData();
      for (const [k, v] of Object.entries({ documentHolder: holder, documentType: "PASSPORT", country: "US", side: "FRONT" })) f.append(k, v);
      f.append("file", new Blob([bytes], { type: "application/pdf" }), name);
      return f;
    };

    it("stores one document for 8 concurrent uploads with one key (the gateway records it), and refuses another file under the key", async () => {
      const holder = (await p.call("POST", "/customers", individual())).body.id as string;
      const list = `/documents?documentHolder=${encodeURIComponent(holder)}`;
      const first = await concurrently("POST", "/documents", () => documentForm(holder), 201);
      expect(JSON.parse(first.text)).toMatchObject({ documentHolder: holder, documentType: "PASSPORT" });
      expect(await count(list)).toBe(1);

      const key = uniq("doc");
      expect((await send("POST", "/documents", key, documentForm(holder))).status).toBe(201);
      await expectReused("POST", "/documents", key, documentForm(holder, Buffer.concat([PDF, Buffer.from("\n% another\n")])));
      expect(await count(list)).toBe(2);
    });

    it("starts one bulk import for 8 concurrent CSV uploads with one key (customers-kyc records it), and refuses another file under the key", async () => {
      const csv = [HEADER, individualRow(uniq("bulk")), individualRow(uniq("bulk"))].join("\n");
      const first = await concurrently("POST", "/customers/bulk/csv", () => csvForm(csv), 202);
      const jobId = JSON.parse(first.text).jobId as string;
      expect((await p.call("GET", `/customers/bulk/jobs/${encodeURIComponent(jobId)}`)).status).toBe(200);

      const key = uniq("csv");
      const other = [HEADER, individualRow(uniq("bulk"))].join("\n");
      expect((await send("POST", "/customers/bulk/csv", key, csvForm(other))).status).toBe(202);
      await expectReused("POST", "/customers/bulk/csv", key, csvForm([HEADER, individualRow(uniq("bulk"))].join("\n")));
    });
  });
});
