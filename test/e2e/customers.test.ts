import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { address, business, expectInvalid, individual, uniq } from "./customers-fixtures.js";
import { mode, skipReason, startTestSystem, type Caller, type TestSystem } from "./harness.js";

describe.skipIf(skipReason())(`customers (${mode})`, () => {
  let system: TestSystem;
  let platform: Caller;
  let umaDomain: string;

  beforeAll(async () => {
    system = await startTestSystem();
    platform = await system.createPlatform({ name: "Customers e2e" });
    umaDomain = (await platform.call("GET", "/config")).body.umaDomain;
  });
  afterAll(async () => {
    await system?.stop();
  });

  const countWith = async (caller: Caller, query: string): Promise<number> => {
    const res = await caller.call("GET", `/customers?${query}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.totalCount;
  };

  describe("create", () => {
    it("creates an UNVERIFIED individual with the default UMA address and every supported currency", async () => {
      const body = individual({ platformCustomerId: uniq("Alice.Smith") });
      const res = await platform.call("POST", "/customers", body);
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body).toMatchObject({
        id: expect.stringMatching(/^Customer:/),
        platformCustomerId: body.platformCustomerId,
        customerType: "INDIVIDUAL",
        umaAddress: `$${body.platformCustomerId.toLowerCase()}@${umaDomain}`,
        currencies: ["USD"],
        kycStatus: "UNVERIFIED",
        isDeleted: false,
        fullName: "Alice Smith",
        birthDate: "1990-04-01",
        nationality: "US",
        address,
        region: "US",
        email: "alice@example.com",
      });
      expect(res.body.kybStatus).toBeUndefined();
      expect(res.body.businessInfo).toBeUndefined();
    });

    it("creates a business with kybStatus and businessInfo, not kycStatus", async () => {
      const res = await platform.call("POST", "/customers", business());
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body).toMatchObject({ customerType: "BUSINESS", kybStatus: "UNVERIFIED", businessInfo: { legalName: "Acme Inc", registrationNumber: "REG-123" } });
      expect(res.body.kycStatus).toBeUndefined();
    });

    it("rejects each invalid field with 400 naming it, and stores nothing", async () => {
      const pcid = uniq("bad");
      const cases: [Record<string, unknown>, string][] = [
        [{ ...individual({ platformCustomerId: pcid }), customerType: undefined }, "body.customerType"],
        [{ ...individual({ platformCustomerId: pcid }), customerType: "ROBOT" }, "body.customerType"],
        [{ ...individual(), platformCustomerId: undefined }, "body.platformCustomerId"],
        [individual({ platformCustomerId: pcid, region: "XX" }), "body.region"],
        [individual({ platformCustomerId: pcid, region: "usa" }), "body.region"],
        [individual({ platformCustomerId: pcid, nationality: "ZZ" }), "body.nationality"],
        [individual({ platformCustomerId: pcid, birthDate: "1990-02-30" }), "body.birthDate"],
        [individual({ platformCustomerId: pcid, birthDate: "2999-01-01" }), "body.birthDate"],
        [individual({ platformCustomerId: pcid, currencies: ["EUR"] }), "body.currencies[0]"],
        [individual({ platformCustomerId: pcid, email: "not-an-email" }), "body.email"],
        [individual({ platformCustomerId: pcid, umaAddress: "alice@example.com" }), "body.umaAddress"],
        [individual({ platformCustomerId: pcid, address: { line1: "x", country: "US" } }), "body.address.postalCode"],
        [individual({ platformCustomerId: pcid, businessInfo: { legalName: "No" } }), "body.businessInfo"],
        [individual({ platformCustomerId: pcid, kycStatus: "APPROVED" }), "body.kycStatus"],
        [individual({ platformCustomerId: pcid, kybStatus: "UNVERIFIED" }), "body.kybStatus"],
        [business({ platformCustomerId: pcid, businessInfo: { registrationNumber: "1" } }), "body.businessInfo.legalName"],
        [business({ platformCustomerId: pcid, businessInfo: undefined }), "body.businessInfo.legalName"],
        [business({ platformCustomerId: pcid, fullName: "Bob" }), "body.fullName"],
        [business({ platformCustomerId: pcid, kybStatus: "APPROVED" }), "body.kybStatus"],
        [individual({ platformCustomerId: pcid, unknownField: 1 }), "body.unknownField"],
      ];
      for (const [body, field] of cases) {
        const res = await platform.call("POST", "/customers", body);
        expectInvalid(res, field);
      }
      expect(await countWith(platform, `platformCustomerId=${pcid}&isIncludingDeleted=true`)).toBe(0);
    });

    it("answers 409 CONFLICT for a duplicate platformCustomerId and 409 UMA_ADDRESS_EXISTS for a duplicate umaAddress", async () => {
      const first = await platform.call("POST", "/customers", individual({ umaAddress: `$${uniq("dup")}@example.com` }));
      expect(first.status).toBe(201);
      const samePcid = await platform.call("POST", "/customers", individual({ platformCustomerId: first.body.platformCustomerId }));
      expect(samePcid.status).toBe(409);
      expect(samePcid.body).toMatchObject({ code: "CONFLICT", details: { field: "body.platformCustomerId" } });
      expect(samePcid.headers.get("x-should-retry")).toBe("false");
      const sameUma = await platform.call("POST", "/customers", individual({ umaAddress: first.body.umaAddress.toUpperCase() }));
      expect(sameUma.status).toBe(409);
      expect(sameUma.body.code).toBe("UMA_ADDRESS_EXISTS");
      const patchUma = await platform.call("POST", "/customers", individual());
      const clash = await platform.call("PATCH", `/customers/${patchUma.body.id}`, { umaAddress: first.body.umaAddress });
      expect(clash.status).toBe(409);
      expect(clash.body.code).toBe("UMA_ADDRESS_EXISTS");
    });

    it("lets a regulated financial institution create APPROVED customers, and nobody else", async () => {
      const regulated = await system.createPlatform({ regulated: true, name: "Regulated bank" });
      const ind = await regulated.call("POST", "/customers", individual({ kycStatus: "APPROVED" }));
      expect(ind.status, JSON.stringify(ind.body)).toBe(201);
      expect(ind.body.kycStatus).toBe("APPROVED");
      const biz = await regulated.call("POST", "/customers", business({ kybStatus: "APPROVED" }));
      expect(biz.body.kybStatus).toBe("APPROVED");
      const plain = await platform.call("POST", "/customers", individual({ kycStatus: "APPROVED" }));
      expectInvalid(plain, "body.kycStatus");
      const patched = await platform.call("POST", "/customers", individual());
      expectInvalid(await platform.call("PATCH", `/customers/${patched.body.id}`, { kycStatus: "APPROVED" }), "body.kycStatus");
    });

    it("needs MANAGE to create and VIEW to read", async () => {
      const t = await platform.call("POST", "/tokens", { name: "viewer", permissions: ["VIEW"] });
      const viewer = system.as(t.body.clientId, t.body.clientSecret);
      const denied = await viewer.call("POST", "/customers", individual());
      expect(denied.status).toBe(403);
      expect((await viewer.call("GET", "/customers")).status).toBe(200);
      const t2 = await platform.call("POST", "/tokens", { name: "transactor", permissions: ["TRANSACT"] });
      const transactor = system.as(t2.body.clientId, t2.body.clientSecret);
      expect((await transactor.call("GET", "/customers")).status).toBe(403);
    });
  });

  describe("read, update and soft delete", () => {
    it("patches only the fields present and validates them", async () => {
      const created = (await platform.call("POST", "/customers", individual())).body;
      const res = await platform.call("PATCH", `/customers/${created.id}`, { email: "new@example.com", currencies: [] });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toMatchObject({ email: "new@example.com", currencies: [], fullName: "Alice Smith", kycStatus: "UNVERIFIED" });
      expect(new Date(res.body.updatedAt).getTime()).toBeGreaterThan(new Date(created.updatedAt).getTime());
      expectInvalid(await platform.call("PATCH", `/customers/${created.id}`, { currencies: ["JPY"] }), "body.currencies[0]");
      expectInvalid(await platform.call("PATCH", `/customers/${created.id}`, { birthDate: "1990-13-01" }), "body.birthDate");
      const wrongType = await platform.call("PATCH", `/customers/${created.id}`, { customerType: "BUSINESS" });
      expectInvalid(wrongType, "body.customerType");
      expect(wrongType.body.message).toContain("must be INDIVIDUAL");
      expect((await platform.call("GET", `/customers/${created.id}`)).body.currencies).toEqual([]);
    });

    it("accepts customerType in a patch when it is the customer's own type (Grid's SDK sends it)", async () => {
      const person = (await platform.call("POST", "/customers", individual())).body;
      const same = await platform.call("PATCH", `/customers/${person.id}`, { customerType: "INDIVIDUAL", email: "same@example.com" });
      expect(same.status, JSON.stringify(same.body)).toBe(200);
      expect(same.body).toMatchObject({ customerType: "INDIVIDUAL", email: "same@example.com" });
      const firm = (await platform.call("POST", "/customers", business())).body;
      const firmSame = await platform.call("PATCH", `/customers/${firm.id}`, { customerType: "BUSINESS", businessInfo: { taxId: "TAX-9" } });
      expect(firmSame.status, JSON.stringify(firmSame.body)).toBe(200);
      expect(firmSame.body.businessInfo).toMatchObject({ legalName: "Acme Inc", taxId: "TAX-9" });
      const firmWrong = await platform.call("PATCH", `/customers/${firm.id}`, { customerType: "INDIVIDUAL", email: "no@example.com" });
      expectInvalid(firmWrong, "body.customerType");
      expect((await platform.call("GET", `/customers/${firm.id}`)).body.email).not.toBe("no@example.com");
    });

    it("soft-deletes: answers isDeleted, then 410 CUSTOMER_DELETED on delete or patch, and hides it from lists by default", async () => {
      const created = (await platform.call("POST", "/customers", individual())).body;
      const del = await platform.call("DELETE", `/customers/${created.id}`);
      expect(del.status).toBe(200);
      expect(del.body).toMatchObject({ id: created.id, isDeleted: true });
      const again = await platform.call("DELETE", `/customers/${created.id}`);
      expect(again.status).toBe(410);
      expect(again.body.code).toBe("CUSTOMER_DELETED");
      expect((await platform.call("PATCH", `/customers/${created.id}`, { email: "x@example.com" })).status).toBe(410);
      expect((await platform.call("GET", `/customers/${created.id}`)).body.isDeleted).toBe(true);
      expect(await countWith(platform, `platformCustomerId=${created.platformCustomerId}`)).toBe(0);
      expect(await countWith(platform, `platformCustomerId=${created.platformCustomerId}&isIncludingDeleted=true`)).toBe(1);
      // Its ids are free again.
      const reuse = await platform.call("POST", "/customers", individual({ platformCustomerId: created.platformCustomerId, umaAddress: created.umaAddress }));
      expect(reuse.status).toBe(201);
    });

    it("answers 404 USER_NOT_FOUND for an unknown id, 400 for a malformed one and 404 NOT_FOUND for a segment that is no id", async () => {
      const res = await platform.call("GET", "/customers/Customer:0190a000-0000-7000-8000-000000000000");
      expect(res.status).toBe(404);
      expect(res.body.code).toBe("USER_NOT_FOUND");
      expectInvalid(await platform.call("GET", "/customers/Customer:nope"), "params.customerId");
      const noId = await platform.call("GET", "/customers/nope");
      expect(noId.status).toBe(404);
      expect(noId.body.code).toBe("NOT_FOUND");
    });
  });

  describe("list", () => {
    it("filters by every listed filter and pages through all matches with a correct totalCount", async () => {
      const p = await system.createPlatform({ name: "List e2e" });
      const cfg = (await p.call("GET", "/config")).body;
      const withEur = await p.call("PATCH", "/config", {
        supportedCurrencies: [...cfg.supportedCurrencies, { ...cfg.supportedCurrencies[0], currencyCode: "EUR" }],
      });
      expect(withEur.status).toBe(200);
      const made: any[] = [];
      for (let i = 0; i < 7; i++) {
        const body =
          i % 2 === 0
            ? individual({ region: i < 4 ? "US" : "MX", currencies: i < 3 ? ["USD", "EUR"] : ["USD"] })
            : business({ region: "GB", currencies: ["EUR"] });
        const res = await p.call("POST", "/customers", body);
        expect(res.status, JSON.stringify(res.body)).toBe(201);
        made.push(res.body);
      }
      const deleted = made[6];
      await p.call("DELETE", `/customers/${deleted.id}`);

      // Walk every page with limit 2: newest first, no repeats, totalCount on every page.
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let pages = 0; pages < 10; pages++) {
        const res = await p.call("GET", `/customers?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
        expect(res.status).toBe(200);
        expect(res.body.totalCount).toBe(6);
        seen.push(...res.body.data.map((c: any) => c.id));
        if (!res.body.hasMore) {
          expect(res.body.nextCursor).toBeUndefined();
          break;
        }
        cursor = res.body.nextCursor;
      }
      expect(seen).toEqual(made.slice(0, 6).map((c) => c.id).reverse());

      const ids = async (q: string) => {
        const res = await p.call("GET", `/customers?limit=100&${q}`);
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        expect(res.body.totalCount).toBe(res.body.data.length);
        return res.body.data.map((c: any) => c.id).sort();
      };
      const idsOf = (xs: any[]) => xs.map((c) => c.id).sort();
      expect(await ids("customerType=BUSINESS")).toEqual(idsOf([made[1], made[3], made[5]]));
      expect(await ids("customerType=INDIVIDUAL")).toEqual(idsOf([made[0], made[2], made[4]]));
      expect(await ids("customerType=INDIVIDUAL&isIncludingDeleted=true")).toEqual(idsOf([made[0], made[2], made[4], made[6]]));
      expect(await ids("region=MX")).toEqual(idsOf([made[4]]));
      expect(await ids("region=MX&isIncludingDeleted=true")).toEqual(idsOf([made[4], made[6]]));
      expect(await ids("currency=EUR")).toEqual(idsOf([made[0], made[1], made[2], made[3], made[5]]));
      expect(await ids(`platformCustomerId=${made[2].platformCustomerId}`)).toEqual([made[2].id]);
      expect(await ids(`umaAddress=${encodeURIComponent(made[3].umaAddress)}`)).toEqual([made[3].id]);
      // Expected sets computed from the answers' own timestamps (two creates may share a millisecond).
      const live = made.slice(0, 6);
      const within = (key: "createdAt" | "updatedAt", after?: string, before?: string) =>
        idsOf(live.filter((c) => (after === undefined || c[key] >= after) && (before === undefined || c[key] <= before)));
      const enc = encodeURIComponent;
      expect(await ids(`createdAfter=${enc(made[2].createdAt)}&createdBefore=${enc(made[4].createdAt)}`)).toEqual(
        within("createdAt", made[2].createdAt, made[4].createdAt),
      );
      expect(await ids(`updatedBefore=${enc(made[1].updatedAt)}`)).toEqual(within("updatedAt", undefined, made[1].updatedAt));
      // updatedAfter picks up a later change.
      const touched = await p.call("PATCH", `/customers/${made[0].id}`, { email: "later@example.com" });
      expect(await ids(`updatedAfter=${encodeURIComponent(touched.body.updatedAt)}`)).toEqual([made[0].id]);
    });

    it("rejects bad filters and paging with 400 naming the query field", async () => {
      expectInvalid(await platform.call("GET", "/customers?limit=0"), "query.limit");
      expectInvalid(await platform.call("GET", "/customers?limit=101"), "query.limit");
      expectInvalid(await platform.call("GET", "/customers?cursor=garbage"), "query.cursor");
      expectInvalid(await platform.call("GET", "/customers?customerType=ROBOT"), "query.customerType");
      expectInvalid(await platform.call("GET", "/customers?createdAfter=yesterday"), "query.createdAfter");
      expectInvalid(await platform.call("GET", "/customers?region=usa"), "query.region");
    });
  });
});
