import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { business, expectInvalid, individual } from "./customers-fixtures.js";
import { mode, skipReason, startTestSystem, type Caller, type TestSystem } from "./harness.js";

const owner = (lastName = "Doe", extra: Record<string, unknown> = {}) => ({
  roles: ["UBO", "DIRECTOR"],
  ownershipPercentage: 40,
  personalInfo: {
    firstName: "Jane",
    lastName,
    birthDate: "1980-01-31",
    nationality: "US",
    address: { line1: "2 Market St", postalCode: "94105", country: "US" },
    idType: "SSN",
    identifier: "123-45-6789",
    phoneNumber: "+14155550100",
  },
  ...extra,
});

describe.skipIf(skipReason())(`customers: verifications, owners, invitations (${mode})`, () => {
  let system: TestSystem;
  let platform: Caller;

  beforeAll(async () => {
    system = await startTestSystem();
    platform = await system.createPlatform({ name: "KYC e2e" });
  });
  afterAll(async () => {
    await system?.stop();
  });

  const create = async (body: Record<string, unknown>, caller = platform) => {
    const res = await caller.call("POST", "/customers", body);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body;
  };
  const verify = (customerId: string, caller = platform) => caller.call("POST", "/verifications", { customerId });
  const addOwner = async (customerId: string, body = owner()) => {
    const res = await platform.call("POST", "/beneficial-owners", { customerId, ...body });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body;
  };

  describe("verifications", () => {
    it("names every missing field of an individual and leaves it UNVERIFIED", async () => {
      const c = await create({ customerType: "INDIVIDUAL", platformCustomerId: `bare-${Date.now()}` });
      const res = await verify(c.id);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: expect.stringMatching(/^Verification:/), customerId: c.id, verificationStatus: "RESOLVE_ERRORS" });
      expect(res.body.errors.map((e: any) => e.field).sort()).toEqual(["address", "birthDate", "fullName", "nationality"]);
      expect(res.body.errors.every((e: any) => e.type === "MISSING_FIELD" && e.reason)).toBe(true);
      expect((await platform.call("GET", `/customers/${c.id}`)).body.kycStatus).toBe("UNVERIFIED");
    });

    it("applies the sandbox fullName suffix to individuals: 001 PENDING, 002 REJECTED, else APPROVED", async () => {
      for (const [name, status] of [
        ["Alice Pending001", "PENDING"],
        ["Alice Rejected002", "REJECTED"],
        ["Alice Smith", "APPROVED"],
        ["Alice 003", "APPROVED"],
      ] as const) {
        const c = await create(individual({ fullName: name }));
        const res = await verify(c.id);
        expect(res.status).toBe(200);
        expect(res.body).toMatchObject({ verificationStatus: status, errors: [] });
        expect((await platform.call("GET", `/customers/${c.id}`)).body.kycStatus).toBe(status);
      }
    });

    it("answers 400 when verifying an APPROVED or REJECTED customer again, and lets a PENDING one retry", async () => {
      const approved = await create(individual());
      await verify(approved.id);
      const again = await verify(approved.id);
      expect(again.status).toBe(400);
      expect(again.body.code).toBe("CUSTOMER_ALREADY_APPROVED");
      const rejected = await create(individual({ fullName: "Bob 002" }));
      await verify(rejected.id);
      expect((await verify(rejected.id)).body.code).toBe("CUSTOMER_ALREADY_REJECTED");
      const pending = await create(individual({ fullName: "Carol 001" }));
      expect((await verify(pending.id)).body.verificationStatus).toBe("PENDING");
      await platform.call("PATCH", `/customers/${pending.id}`, { fullName: "Carol Fixed" });
      expect((await verify(pending.id)).body.verificationStatus).toBe("APPROVED");
    });

    it("requires a beneficial owner for a business, then applies the registrationNumber suffix", async () => {
      const biz = await create(business({ businessInfo: { legalName: "Shell Co" } }));
      const res = await verify(biz.id);
      expect(res.body.verificationStatus).toBe("RESOLVE_ERRORS");
      expect(res.body.errors.map((e: any) => e.field).sort()).toEqual(["beneficialOwners", "businessInfo.registrationNumber", "businessInfo.taxId"]);
      expect(res.body.errors.find((e: any) => e.field === "beneficialOwners").type).toBe("MISSING_BENEFICIAL_OWNER");
      expect((await platform.call("GET", `/customers/${biz.id}`)).body.kybStatus).toBe("UNVERIFIED");

      for (const [reg, status] of [
        ["REG-001", "PENDING"],
        ["REG-002", "REJECTED"],
        ["REG-777", "APPROVED"],
      ] as const) {
        const c = await create(business({ businessInfo: { legalName: "Acme", registrationNumber: reg, taxId: "99" } }));
        await addOwner(c.id);
        const v = await verify(c.id);
        expect(v.body).toMatchObject({ verificationStatus: status, errors: [] });
        const after = (await platform.call("GET", `/customers/${c.id}`)).body;
        expect(after.kybStatus).toBe(status);
        expect(after.kycStatus).toBeUndefined();
      }
    });

    it("lists verifications by customer and status with paging, and reads one", async () => {
      const c = await create(individual({ fullName: "Dan 001" }));
      const first = (await verify(c.id)).body;
      const second = (await verify(c.id)).body;
      const page1 = await platform.call("GET", `/verifications?customerId=${c.id}&limit=1`);
      expect(page1.body).toMatchObject({ totalCount: 2, hasMore: true, data: [{ id: second.id }] });
      const page2 = await platform.call("GET", `/verifications?customerId=${c.id}&limit=1&cursor=${page1.body.nextCursor}`);
      expect(page2.body).toMatchObject({ totalCount: 2, hasMore: false, data: [{ id: first.id }] });
      const approvedOnly = await platform.call("GET", `/verifications?customerId=${c.id}&verificationStatus=APPROVED`);
      expect(approvedOnly.body.totalCount).toBe(0);
      const pendingOnly = await platform.call("GET", `/verifications?verificationStatus=PENDING&limit=100`);
      expect(pendingOnly.body.data.every((v: any) => v.verificationStatus === "PENDING")).toBe(true);
      expect(pendingOnly.body.data.map((v: any) => v.id)).toContain(first.id);
      const one = await platform.call("GET", `/verifications/${first.id}`);
      expect(one.body).toEqual(first);
      expectInvalid(await platform.call("GET", "/verifications?verificationStatus=MAYBE"), "query.verificationStatus");
      expectInvalid(await platform.call("POST", "/verifications", {}), "body.customerId");
      expect((await verify("Customer:0190a000-0000-7000-8000-000000000000")).status).toBe(404);
    });

    it("answers 410 when verifying a deleted customer", async () => {
      const c = await create(individual());
      await platform.call("DELETE", `/customers/${c.id}`);
      const res = await verify(c.id);
      expect(res.status).toBe(410);
      expect(res.body.code).toBe("CUSTOMER_DELETED");
    });
  });

  describe("kycStatus / kybStatus set directly", () => {
    it("refuses a non-regulated platform resetting a REJECTED customer; a rename keeps it REJECTED and verifying again is 400", async () => {
      const c = await create(individual({ fullName: "Bob Smith002" }));
      expect((await verify(c.id)).body.verificationStatus).toBe("REJECTED");
      const before = (await platform.call("GET", `/customers/${c.id}`)).body;

      const reset = await platform.call("PATCH", `/customers/${c.id}`, { kycStatus: "UNVERIFIED", fullName: "Bob Smith" });
      expectInvalid(reset, "body.kycStatus");
      expect(reset.body.details.errors.find((e: any) => e.field === "body.kycStatus").reason).toMatch(/regulated financial institution/);
      expectInvalid(await platform.call("PATCH", `/customers/${c.id}`, { kycStatus: "APPROVED" }), "body.kycStatus");
      expect((await platform.call("GET", `/customers/${c.id}`)).body).toEqual(before);

      // Sending the status it already has is a no-op and allowed; the rename does not reopen KYC.
      const renamed = await platform.call("PATCH", `/customers/${c.id}`, { kycStatus: "REJECTED", fullName: "Bob Smith" });
      expect(renamed.status, JSON.stringify(renamed.body)).toBe(200);
      expect(renamed.body).toMatchObject({ kycStatus: "REJECTED", fullName: "Bob Smith" });
      const again = await verify(c.id);
      expect(again.status).toBe(400);
      expect(again.body.code).toBe("CUSTOMER_ALREADY_REJECTED");
      expect((await platform.call("GET", `/customers/${c.id}`)).body.kycStatus).toBe("REJECTED");
      expect((await platform.call("GET", `/verifications?customerId=${c.id}`)).body.totalCount).toBe(1);
    });

    it("refuses kybStatus on a non-regulated business too", async () => {
      const biz = await create(business({ businessInfo: { legalName: "Acme", registrationNumber: "REG-002", taxId: "99" } }));
      await addOwner(biz.id);
      expect((await verify(biz.id)).body.verificationStatus).toBe("REJECTED");
      expectInvalid(await platform.call("PATCH", `/customers/${biz.id}`, { kybStatus: "UNVERIFIED", businessInfo: { registrationNumber: "REG-777" } }), "body.kybStatus");
      const after = (await platform.call("GET", `/customers/${biz.id}`)).body;
      expect(after).toMatchObject({ kybStatus: "REJECTED", businessInfo: { registrationNumber: "REG-002" } });
    });

    it("lets a regulated financial institution set and change statuses", async () => {
      const regulated = await system.createPlatform({ regulated: true, name: "Regulated KYC bank" });
      const c = await create(individual({ kycStatus: "REJECTED" }), regulated);
      expect(c.kycStatus).toBe("REJECTED");
      const reopened = await regulated.call("PATCH", `/customers/${c.id}`, { kycStatus: "UNVERIFIED" });
      expect(reopened.status, JSON.stringify(reopened.body)).toBe(200);
      expect(reopened.body.kycStatus).toBe("UNVERIFIED");
      expect((await regulated.call("PATCH", `/customers/${c.id}`, { kycStatus: "APPROVED" })).body.kycStatus).toBe("APPROVED");
      const biz = await create(business(), regulated);
      expect((await regulated.call("PATCH", `/customers/${biz.id}`, { kybStatus: "PENDING" })).body.kybStatus).toBe("PENDING");
    });
  });

  describe("beneficial owners", () => {
    it("runs the owner's KYC on creation by lastName suffix", async () => {
      const biz = await create(business());
      for (const [lastName, status] of [
        ["Doe001", "PENDING"],
        ["Doe002", "REJECTED"],
        ["Doe", "APPROVED"],
      ] as const) {
        const o = await addOwner(biz.id, owner(lastName, { ownershipPercentage: 10 }));
        expect(o).toMatchObject({
          id: expect.stringMatching(/^BeneficialOwner:/),
          customerId: biz.id,
          roles: ["UBO", "DIRECTOR"],
          ownershipPercentage: 10,
          kycStatus: status,
          personalInfo: { firstName: "Jane", lastName, idType: "SSN", phoneNumber: "+14155550100" },
        });
      }
    });

    it("rejects owners of individuals, bad fields and a UBO total above 100, storing nothing", async () => {
      const ind = await create(individual());
      expectInvalid(await platform.call("POST", "/beneficial-owners", { customerId: ind.id, ...owner() }), "body.customerId");
      const biz = await create(business());
      const bad = (patch: Record<string, unknown>) => ({ customerId: biz.id, ...owner(), ...patch });
      const info = owner().personalInfo;
      const cases: [Record<string, unknown>, string][] = [
        [bad({ roles: [] }), "body.roles"],
        [bad({ roles: ["OWNER"] }), "body.roles[0]"],
        [bad({ ownershipPercentage: 101 }), "body.ownershipPercentage"],
        [bad({ ownershipPercentage: -0.5 }), "body.ownershipPercentage"],
        [bad({ ownershipPercentage: 100.5 }), "body.ownershipPercentage"],
        [bad({ ownershipPercentage: "12.5" }), "body.ownershipPercentage"],
        [bad({ personalInfo: { ...info, firstName: undefined } }), "body.personalInfo.firstName"],
        [bad({ personalInfo: { ...info, address: undefined } }), "body.personalInfo.address"],
        [bad({ personalInfo: { ...info, idType: "PASSPORT" } }), "body.personalInfo.idType"],
        [bad({ personalInfo: { ...info, identifier: undefined } }), "body.personalInfo.identifier"],
        [bad({ personalInfo: { ...info, phoneNumber: "415-555-0100" } }), "body.personalInfo.phoneNumber"],
        [bad({ personalInfo: { ...info, birthDate: "1980-02-30" } }), "body.personalInfo.birthDate"],
        [bad({ personalInfo: { ...info, nationality: "QQ" } }), "body.personalInfo.nationality"],
        [bad({ personalInfo: undefined }), "body.personalInfo"],
      ];
      for (const [body, field] of cases) expectInvalid(await platform.call("POST", "/beneficial-owners", body), field);
      // Shares are numbers: 12.5 is valid, and fractional UBO shares total at most 100.
      const a = await addOwner(biz.id, owner("A", { ownershipPercentage: 47.5 }));
      expect(a.ownershipPercentage).toBe(47.5);
      await addOwner(biz.id, owner("B", { roles: ["DIRECTOR"], ownershipPercentage: 90 })); // not a UBO: not counted
      const c = await addOwner(biz.id, owner("C", { ownershipPercentage: 12.5 }));
      expectInvalid(await platform.call("POST", "/beneficial-owners", { customerId: biz.id, ...owner("D", { ownershipPercentage: 40.1 }) }), "body.ownershipPercentage");
      expect((await platform.call("GET", `/beneficial-owners/${c.id}`)).body.ownershipPercentage).toBe(12.5);
      const patched = await platform.call("PATCH", `/beneficial-owners/${c.id}`, { ownershipPercentage: 52.5 });
      expect(patched.status, JSON.stringify(patched.body)).toBe(200);
      expect(patched.body.ownershipPercentage).toBe(52.5);
      const list = await platform.call("GET", `/beneficial-owners?customerId=${biz.id}`);
      expect(list.body.totalCount).toBe(3);
    });

    it("lists one business's owners with paging, reads and patches one", async () => {
      const biz = await create(business());
      const made = [];
      for (let i = 0; i < 3; i++) made.push(await addOwner(biz.id, owner(`Owner${i}`, { ownershipPercentage: 10 })));
      const p1 = await platform.call("GET", `/beneficial-owners?customerId=${biz.id}&limit=2`);
      expect(p1.body).toMatchObject({ totalCount: 3, hasMore: true });
      const p2 = await platform.call("GET", `/beneficial-owners?customerId=${biz.id}&limit=2&cursor=${p1.body.nextCursor}`);
      expect(p2.body).toMatchObject({ totalCount: 3, hasMore: false });
      expect([...p1.body.data, ...p2.body.data].map((o: any) => o.id)).toEqual(made.map((o) => o.id).reverse());
      expectInvalid(await platform.call("GET", "/beneficial-owners"), "query.customerId");

      const got = await platform.call("GET", `/beneficial-owners/${made[0].id}`);
      expect(got.body).toEqual(made[0]);
      const patched = await platform.call("PATCH", `/beneficial-owners/${made[0].id}`, {
        roles: ["CONTROL_PERSON"],
        ownershipPercentage: 0,
        personalInfo: { email: "jane@example.com" },
      });
      expect(patched.status, JSON.stringify(patched.body)).toBe(200);
      expect(patched.body).toMatchObject({ roles: ["CONTROL_PERSON"], ownershipPercentage: 0, personalInfo: { email: "jane@example.com", lastName: "Owner0" } });
      expectInvalid(await platform.call("PATCH", `/beneficial-owners/${made[0].id}`, { personalInfo: { phoneNumber: "12" } }), "body.personalInfo.phoneNumber");
      expectInvalid(await platform.call("PATCH", `/beneficial-owners/${made[1].id}`, { ownershipPercentage: 95 }), "body.ownershipPercentage");
    });

    it("re-runs KYC when a PENDING owner's lastName changes", async () => {
      const biz = await create(business());
      const o = await addOwner(biz.id, owner("Later001"));
      expect(o.kycStatus).toBe("PENDING");
      const res = await platform.call("PATCH", `/beneficial-owners/${o.id}`, { personalInfo: { lastName: "Later" } });
      expect(res.body.kycStatus).toBe("APPROVED");
    });

    it("keeps a REJECTED or APPROVED owner's status when its lastName changes", async () => {
      const biz = await create(business({ businessInfo: { legalName: "Acme", registrationNumber: "REG-777", taxId: "99" } }));
      const rejected = await addOwner(biz.id, owner("Shady002", { ownershipPercentage: 10 }));
      expect(rejected.kycStatus).toBe("REJECTED");
      const renamed = await platform.call("PATCH", `/beneficial-owners/${rejected.id}`, { personalInfo: { lastName: "Shady" } });
      expect(renamed.status, JSON.stringify(renamed.body)).toBe(200);
      expect(renamed.body).toMatchObject({ kycStatus: "REJECTED", personalInfo: { lastName: "Shady" } });
      expect((await platform.call("GET", `/beneficial-owners/${rejected.id}`)).body.kycStatus).toBe("REJECTED");

      const approved = await addOwner(biz.id, owner("Fine", { ownershipPercentage: 10 }));
      const approvedRenamed = await platform.call("PATCH", `/beneficial-owners/${approved.id}`, { personalInfo: { lastName: "Fine002" } });
      expect(approvedRenamed.body.kycStatus).toBe("APPROVED");

      // The renamed rejected owner still blocks the business's KYB.
      const v = await verify(biz.id);
      expect(v.body.verificationStatus).toBe("RESOLVE_ERRORS");
      expect(v.body.errors.map((e: any) => e.field)).toEqual([`beneficialOwners.${rejected.id}`]);
      expect((await platform.call("GET", `/customers/${biz.id}`)).body.kybStatus).toBe("UNVERIFIED");
    });
  });

  describe("invitations", () => {
    it("creates a PENDING invitation with a URL-safe code and url, claims it once, and refuses a second claim", async () => {
      const inviter = await create(individual());
      const res = await platform.call("POST", "/invitations", { inviterUma: inviter.umaAddress, firstName: "Bob", amountToSend: 1500 });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body).toMatchObject({
        code: expect.stringMatching(/^[A-Za-z0-9_-]{16}$/),
        inviterUma: inviter.umaAddress,
        status: "PENDING",
        firstName: "Bob",
        amountToSend: { amount: 1500, currency: { code: "USD", name: "US Dollar", symbol: "$", decimals: 2 } },
      });
      expect(res.body.url).toBe(`https://uma.me/i/${res.body.code}`);
      const code = res.body.code;
      expect((await platform.call("GET", `/invitations/${code}`)).body).toEqual(res.body);

      const claim = await platform.call("POST", `/invitations/${code}/claim`, { inviteeUma: "$bob@other.example" });
      expect(claim.status).toBe(200);
      expect(claim.body).toMatchObject({ status: "CLAIMED", inviteeUma: "$bob@other.example", claimedAt: expect.any(String) });
      const twice = await platform.call("POST", `/invitations/${code}/claim`, { inviteeUma: "$eve@other.example" });
      expect(twice.status).toBe(400);
      expect(twice.body.code).toBe("INVITATION_ALREADY_CLAIMED");
      expect((await platform.call("POST", `/invitations/${code}/cancel`)).status).toBe(400);
      expect((await platform.call("GET", `/invitations/${code}`)).body.inviteeUma).toBe("$bob@other.example");
    });

    it("cancels a pending invitation, after which it cannot be claimed", async () => {
      const inviter = await create(individual());
      const inv = (await platform.call("POST", "/invitations", { inviterUma: inviter.umaAddress })).body;
      const cancelled = await platform.call("POST", `/invitations/${inv.code}/cancel`);
      expect(cancelled.body.status).toBe("CANCELLED");
      const claim = await platform.call("POST", `/invitations/${inv.code}/claim`, { inviteeUma: "$bob@other.example" });
      expect(claim.status).toBe(400);
      expect(claim.body.code).toBe("INVITATION_CANCELLED");
    });

    it("validates invitations", async () => {
      const inviter = await create(individual());
      expectInvalid(await platform.call("POST", "/invitations", { inviterUma: "bob" }), "body.inviterUma");
      expectInvalid(await platform.call("POST", "/invitations", { inviterUma: "$nobody@nowhere.example" }), "body.inviterUma");
      expectInvalid(await platform.call("POST", "/invitations", { inviterUma: inviter.umaAddress, expiresAt: "2001-01-01T00:00:00Z" }), "body.expiresAt");
      expectInvalid(await platform.call("POST", "/invitations", { inviterUma: inviter.umaAddress, amountToSend: 0 }), "body.amountToSend");
      expectInvalid(await platform.call("POST", "/invitations", { inviterUma: inviter.umaAddress, amountToSend: 5, currency: "EUR" }), "body.currency");
      const inv = (await platform.call("POST", "/invitations", { inviterUma: inviter.umaAddress })).body;
      expectInvalid(await platform.call("POST", `/invitations/${inv.code}/claim`, { inviteeUma: "not-uma" }), "body.inviteeUma");
      expect((await platform.call("GET", "/invitations/doesNotExist")).status).toBe(404);
    });
  });

  describe("tenant isolation", () => {
    it("answers 404 on every route when another platform uses this platform's ids", async () => {
      const ind = await create(individual());
      const biz = await create(business());
      const o = await addOwner(biz.id);
      const v = (await verify(ind.id)).body;
      const inv = (await platform.call("POST", "/invitations", { inviterUma: ind.umaAddress })).body;
      const other = await system.createPlatform({ name: "Intruder" });

      const walk: [string, string, unknown?][] = [
        ["GET", `/customers/${ind.id}`],
        ["PATCH", `/customers/${ind.id}`, { email: "x@example.com" }],
        ["DELETE", `/customers/${ind.id}`],
        ["POST", "/verifications", { customerId: biz.id }],
        ["GET", `/verifications/${v.id}`],
        ["POST", "/beneficial-owners", { customerId: biz.id, ...owner() }],
        ["GET", `/beneficial-owners?customerId=${biz.id}`],
        ["GET", `/beneficial-owners/${o.id}`],
        ["PATCH", `/beneficial-owners/${o.id}`, { ownershipPercentage: 1 }],
        ["GET", `/invitations/${inv.code}`],
        ["POST", `/invitations/${inv.code}/claim`, { inviteeUma: "$x@y.example" }],
        ["POST", `/invitations/${inv.code}/cancel`],
      ];
      for (const [method, path, body] of walk) {
        const res = await other.call(method, path, body);
        expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBe(404);
      }
      // The intruder's lists and filters never show the first platform's records.
      expect((await other.call("GET", `/customers?platformCustomerId=${ind.platformCustomerId}`)).body.totalCount).toBe(0);
      expect((await other.call("GET", `/customers?umaAddress=${encodeURIComponent(ind.umaAddress)}`)).body.totalCount).toBe(0);
      expect((await other.call("GET", `/verifications?customerId=${ind.id}`)).body.totalCount).toBe(0);
      expectInvalid(await other.call("POST", "/invitations", { inviterUma: ind.umaAddress }), "body.inviterUma");
      // And nothing changed for the owner platform.
      expect((await platform.call("GET", `/customers/${ind.id}`)).body).toMatchObject({ isDeleted: false, email: "alice@example.com" });
      expect((await platform.call("GET", `/invitations/${inv.code}`)).body.status).toBe("PENDING");
      expect((await platform.call("GET", `/beneficial-owners/${o.id}`)).body.ownershipPercentage).toBe(40);
    });
  });
});
