import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { topics } from "@corridor/kit";
import { AddressSchema, BusinessInfoSchema, CurrencyListSchema, CustomerInputSchema, PersonalInfoSchema } from "@corridor/proto/corridor/customers_kyc/v1/customer_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectPublicError, fieldsOf, startHarness, type Harness } from "./harness.js";

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ env: { CORRIDOR_INVITATION_BASE_URL: "https://invite.example/u/" }, codes: ["fixedCode1", "fixedCode1", "fixedCode2"] });
});
afterAll(async () => {
  await h?.close();
});

const address = create(AddressSchema, { line1: "1 Main St", postalCode: "94105", country: "US" });
let n = 0;
const individual = (extra: Record<string, unknown> = {}) =>
  create(CustomerInputSchema, {
    customerType: "INDIVIDUAL",
    platformCustomerId: `ind-${++n}`,
    fullName: "Alice Smith",
    birthDate: "1990-04-01",
    nationality: "US",
    address,
    ...extra,
  });
const business = (registrationNumber: string) =>
  create(CustomerInputSchema, {
    customerType: "BUSINESS",
    platformCustomerId: `biz-${++n}`,
    address,
    businessInfo: create(BusinessInfoSchema, { legalName: "Acme", registrationNumber, taxId: "12-3" }),
  });
const personalInfo = (lastName: string) =>
  create(PersonalInfoSchema, {
    firstName: "Jane",
    lastName,
    birthDate: "1980-01-01",
    nationality: "US",
    address,
    idType: "EIN",
    identifier: "12-3456789",
  });

const eventsAfter = async (before: number) => (await h.events()).slice(before);

describe("GetCustomerSummary (the ledger's question)", () => {
  it("answers the verification status and currencies, and 404 for another platform's customer", async () => {
    const platformId = h.platform();
    const other = h.platform();
    const { customer } = await h.client.createCustomer({ platformId, customer: individual() });
    const before = await h.client.getCustomerSummary({ platformId, customerId: customer!.id });
    expect(before.customer).toMatchObject({ customerId: customer!.id, platformId, verificationStatus: "UNVERIFIED", currencies: ["USD", "EUR"], isDeleted: false });
    await h.client.createVerification({ platformId, customerId: customer!.id });
    const after = await h.client.getCustomerSummary({ platformId, customerId: customer!.id });
    expect(after.customer!.verificationStatus).toBe("APPROVED");
    await expectPublicError(h.client.getCustomerSummary({ platformId: other, customerId: customer!.id }), "NOT_FOUND", "USER_NOT_FOUND");
  });
});

describe("events on corridor.customers.v1", () => {
  it("announces creation, every update, status changes and deletion, keyed by customer id", async () => {
    const platformId = h.platform();
    const start = (await h.events()).length;
    const { customer } = await h.client.createCustomer({ platformId, customer: individual() });
    const id = customer!.id;
    await h.client.updateCustomer({ platformId, customerId: id, patch: create(CustomerInputSchema, { currencies: create(CurrencyListSchema, { codes: ["EUR"] }) }) });
    await h.client.createVerification({ platformId, customerId: id });
    await h.client.deleteCustomer({ platformId, customerId: id });
    const evs = await eventsAfter(start);
    expect(evs.map((e) => e.type)).toEqual(["CUSTOMER_CREATED", "CUSTOMER_UPDATED", "VERIFICATION_APPROVED", "CUSTOMER_UPDATED", "CUSTOMER_KYC_APPROVED", "CUSTOMER_DELETED"]);
    // Each on the topic of the services that act on it: the record (ledger) or the webhooks (notifications).
    expect(evs.map((e) => e.topic)).toEqual([topics.customerRecords, topics.customerRecords, topics.customerNotices, topics.customerRecords, topics.customerNotices, topics.customerRecords]);
    expect(evs.every((e) => e.event.platformId === platformId)).toBe(true);
    expect(evs.every((e) => e.key === id)).toBe(true);
    const updated = evs[1]!.event.payload;
    expect(updated.case).toBe("customerUpdated");
    if (updated.case === "customerUpdated") expect(updated.value.customer!.currencies).toEqual(["EUR"]);
    const approved = evs[3]!.event.payload;
    if (approved.case === "customerUpdated") expect(approved.value.customer!.verificationStatus).toBe("APPROVED");
    const status = evs[4]!.event.payload;
    expect(status.case).toBe("customerStatusChanged");
    if (status.case === "customerStatusChanged") expect(status.value).toMatchObject({ previousStatus: "UNVERIFIED", customer: { verificationStatus: "APPROVED" } });
    const deleted = evs[5]!.event.payload;
    if (deleted.case === "customerDeleted") expect(deleted.value.customer!.isDeleted).toBe(true);
  });

  it("uses CUSTOMER_KYB_* for businesses and VERIFICATION_RESOLVE_ERRORS without touching the customer", async () => {
    const platformId = h.platform();
    const { customer } = await h.client.createCustomer({ platformId, customer: business("R-001") });
    const start = (await h.events()).length;
    await h.client.createVerification({ platformId, customerId: customer!.id });
    expect((await eventsAfter(start)).map((e) => e.type)).toEqual(["VERIFICATION_RESOLVE_ERRORS"]);
    await h.client.createBeneficialOwner({ platformId, customerId: customer!.id, roles: ["UBO"], ownershipPercentage: 100, personalInfo: personalInfo("Doe") });
    await h.client.createVerification({ platformId, customerId: customer!.id });
    expect((await eventsAfter(start)).map((e) => e.type)).toEqual([
      "VERIFICATION_RESOLVE_ERRORS",
      "BENEFICIAL_OWNER_CREATED",
      "VERIFICATION_PENDING",
      "CUSTOMER_UPDATED",
      "CUSTOMER_KYB_PENDING",
    ]);
  });

  it("emits CUSTOMER_KYC_APPROVED at creation for a regulated platform's APPROVED customer", async () => {
    const platformId = h.platform({ isRegulated: true });
    const start = (await h.events()).length;
    await h.client.createCustomer({ platformId, customer: individual({ verificationStatus: "APPROVED" }) });
    expect((await eventsAfter(start)).map((e) => e.type)).toEqual(["CUSTOMER_CREATED", "CUSTOMER_KYC_APPROVED"]);
  });

  it("writes no row and no event when the input is invalid", async () => {
    const platformId = h.platform();
    const start = (await h.events()).length;
    const err = await expectPublicError(h.client.createCustomer({ platformId, customer: individual({ region: "XX", birthDate: "2031-01-01" }) }), "INVALID", "INVALID_INPUT");
    expect(fieldsOf(err).sort()).toEqual(["birthDate", "region"]);
    expect(await eventsAfter(start)).toEqual([]);
    expect((await h.client.listCustomers({ platformId })).pageInfo!.totalCount).toBe(0n);
  });
});

describe("UMA addresses", () => {
  it("derives distinct default addresses when two platform customer ids map to one handle", async () => {
    const platformId = h.platform({ umaDomain: "pay.example.com" });
    const a = await h.client.createCustomer({ platformId, customer: individual({ platformCustomerId: "John Doe" }) });
    const b = await h.client.createCustomer({ platformId, customer: individual({ platformCustomerId: "john-doe" }) });
    expect(a.customer!.umaAddress).toBe("$john-doe@pay.example.com");
    expect(b.customer!.umaAddress).toMatch(/^\$john-doe-[0-9a-f]{6}@pay\.example\.com$/);
  });

  it("leaves the address empty when the platform has no UMA domain and none was given", async () => {
    const platformId = h.platform({ umaDomain: "" });
    const { customer } = await h.client.createCustomer({ platformId, customer: individual() });
    expect(customer!.umaAddress).toBe("");
  });
});

describe("kycStatus / kybStatus set directly (only regulated financial institutions)", () => {
  const rename = (platformId: string, customerId: string, extra: Record<string, unknown>) =>
    h.client.updateCustomer({ platformId, customerId, patch: create(CustomerInputSchema, extra) });

  it("refuses a non-regulated platform resetting a REJECTED customer, changes nothing, and keeps it REJECTED after a rename", async () => {
    const platformId = h.platform();
    const { customer } = await h.client.createCustomer({ platformId, customer: individual({ fullName: "Bob Smith002" }) });
    const id = customer!.id;
    expect((await h.client.createVerification({ platformId, customerId: id })).verification!.verificationStatus).toBe("REJECTED");
    const before = (await h.client.getCustomer({ platformId, customerId: id })).customer!;
    const start = (await h.events()).length;

    for (const status of ["UNVERIFIED", "PENDING", "APPROVED"]) {
      const err = await expectPublicError(rename(platformId, id, { verificationStatus: status, fullName: "Bob Smith" }), "INVALID", "INVALID_INPUT");
      expect(fieldsOf(err)).toEqual(["kycStatus"]);
      expect((err.details?.errors as { reason: string }[])[0]!.reason).toMatch(/regulated financial institution.*REJECTED/);
    }
    // Nothing stored, nothing announced: not even the name that came with the refused status.
    expect((await h.client.getCustomer({ platformId, customerId: id })).customer).toEqual(before);
    expect(await eventsAfter(start)).toEqual([]);

    // The current value is a no-op and allowed; a rename alone does not reopen KYC.
    const same = await rename(platformId, id, { verificationStatus: "REJECTED", email: "bob@example.com" });
    expect(same.customer).toMatchObject({ verificationStatus: "REJECTED", email: "bob@example.com" });
    const renamed = await rename(platformId, id, { fullName: "Bob Smith" });
    expect(renamed.customer).toMatchObject({ verificationStatus: "REJECTED", fullName: "Bob Smith" });
    expect((await eventsAfter(start)).map((e) => e.type)).toEqual(["CUSTOMER_UPDATED", "CUSTOMER_UPDATED"]);
    await expectPublicError(h.client.createVerification({ platformId, customerId: id }), "INVALID", "CUSTOMER_ALREADY_REJECTED");
    expect((await h.client.getCustomerSummary({ platformId, customerId: id })).customer!.verificationStatus).toBe("REJECTED");
  });

  it("names kybStatus for businesses and refuses a non-regulated APPROVED business being reset", async () => {
    const platformId = h.platform();
    const { customer } = await h.client.createCustomer({ platformId, customer: business("R-777") });
    await h.client.createBeneficialOwner({ platformId, customerId: customer!.id, roles: ["UBO"], ownershipPercentage: 100, personalInfo: personalInfo("Doe") });
    expect((await h.client.createVerification({ platformId, customerId: customer!.id })).verification!.verificationStatus).toBe("APPROVED");
    const err = await expectPublicError(rename(platformId, customer!.id, { verificationStatus: "UNVERIFIED" }), "INVALID", "INVALID_INPUT");
    expect(fieldsOf(err)).toEqual(["kybStatus"]);
    expect((await h.client.getCustomer({ platformId, customerId: customer!.id })).customer!.verificationStatus).toBe("APPROVED");
    // An unknown value is named once, as an unknown value, for regulated and other platforms alike.
    const bad = await expectPublicError(rename(platformId, customer!.id, { verificationStatus: "MAYBE" }), "INVALID", "INVALID_INPUT");
    expect((bad.details?.errors as { field: string; reason: string }[]).map((e) => [e.field, e.reason])).toEqual([["kybStatus", expect.stringMatching(/^must be one of/)]]);
  });

  it("still accepts UNVERIFIED on create from a non-regulated platform (it is where every customer starts)", async () => {
    const platformId = h.platform();
    const { customer } = await h.client.createCustomer({ platformId, customer: individual({ verificationStatus: "UNVERIFIED" }) });
    expect(customer!.verificationStatus).toBe("UNVERIFIED");
    const err = await expectPublicError(h.client.createCustomer({ platformId, customer: individual({ verificationStatus: "REJECTED" }) }), "INVALID", "INVALID_INPUT");
    expect(fieldsOf(err)).toEqual(["kycStatus"]);
  });

  it("lets a regulated platform set any status on PATCH, announcing each change", async () => {
    const platformId = h.platform({ isRegulated: true });
    const { customer } = await h.client.createCustomer({ platformId, customer: individual({ verificationStatus: "REJECTED" }) });
    const id = customer!.id;
    const start = (await h.events()).length;
    expect((await rename(platformId, id, { verificationStatus: "UNVERIFIED" })).customer!.verificationStatus).toBe("UNVERIFIED");
    expect((await rename(platformId, id, { verificationStatus: "APPROVED" })).customer!.verificationStatus).toBe("APPROVED");
    expect((await eventsAfter(start)).map((e) => e.type)).toEqual(["CUSTOMER_UPDATED", "CUSTOMER_KYC_UNVERIFIED", "CUSTOMER_UPDATED", "CUSTOMER_KYC_APPROVED"]);
    expect((await h.client.getCustomerSummary({ platformId, customerId: id })).customer!.verificationStatus).toBe("APPROVED");
  });
});

describe("beneficial owner KYC on a lastName change", () => {
  const setup = async (settings: Parameters<Harness["platform"]>[0] = {}) => {
    const platformId = h.platform(settings);
    const { customer } = await h.client.createCustomer({ platformId, customer: business("R-5") });
    const add = async (lastName: string) =>
      (await h.client.createBeneficialOwner({ platformId, customerId: customer!.id, roles: ["DIRECTOR"], personalInfo: personalInfo(lastName) })).beneficialOwner!;
    const renameOwner = async (id: string, lastName: string) =>
      (await h.client.updateBeneficialOwner({ platformId, beneficialOwnerId: id, personalInfo: create(PersonalInfoSchema, { lastName }) })).beneficialOwner!;
    return { platformId, customerId: customer!.id, add, renameOwner };
  };

  it("re-runs it from PENDING only: REJECTED and APPROVED owners keep their status", async () => {
    const { platformId, customerId, add, renameOwner } = await setup();
    const pending = await add("Doe001");
    expect(pending.kycStatus).toBe("PENDING");
    expect((await renameOwner(pending.id, "Doe001")).kycStatus).toBe("PENDING"); // same name: nothing re-runs
    expect((await renameOwner(pending.id, "Doe")).kycStatus).toBe("APPROVED");

    const pending2 = await add("Roe001");
    expect((await renameOwner(pending2.id, "Roe002")).kycStatus).toBe("REJECTED");

    const rejected = await add("Poe002");
    const renamed = await renameOwner(rejected.id, "Poe");
    expect(renamed).toMatchObject({ kycStatus: "REJECTED", personalInfo: { lastName: "Poe" } });
    expect((await h.client.getBeneficialOwner({ platformId, beneficialOwnerId: rejected.id })).beneficialOwner!.kycStatus).toBe("REJECTED");

    const approved = await add("Moe");
    expect((await renameOwner(approved.id, "Moe002")).kycStatus).toBe("APPROVED");

    // The rejected owners still block the business's KYB, renamed or not.
    const v = await h.client.createVerification({ platformId, customerId });
    expect(v.verification!.verificationStatus).toBe("RESOLVE_ERRORS");
    expect(v.verification!.errors.map((e) => e.field).sort()).toEqual([`beneficialOwners.${pending2.id}`, `beneficialOwners.${rejected.id}`].sort());
  });

  it("keeps a production owner PENDING on a rename (no sandbox rule there)", async () => {
    const { add, renameOwner } = await setup({ environment: "PRODUCTION" });
    const o = await add("Doe");
    expect(o.kycStatus).toBe("PENDING");
    expect((await renameOwner(o.id, "Doe002")).kycStatus).toBe("PENDING");
  });
});

describe("production platforms", () => {
  it("answer a complete verification PENDING and queue it for the operator's review (names decide nothing); owner KYC stays PENDING whatever the names say", async () => {
    const platformId = h.platform({ environment: "PRODUCTION" });
    const { customer } = await h.client.createCustomer({ platformId, customer: individual({ fullName: "Magic Approve" }) });
    const { verification } = await h.client.createVerification({ platformId, customerId: customer!.id });
    expect(verification!.verificationStatus).toBe("PENDING");
    expect((await h.client.getCustomer({ platformId, customerId: customer!.id })).customer!.verificationStatus).toBe("PENDING");
    const { reviews } = await h.admin.listReviews({ platformId, status: "SUBMITTED" });
    expect(reviews.map((r) => [r.subjectId, r.verificationId])).toEqual([[customer!.id, verification!.id]]);
    const biz = await h.client.createCustomer({ platformId, customer: business("X-999") });
    const o = await h.client.createBeneficialOwner({ platformId, customerId: biz.customer!.id, roles: ["DIRECTOR"], personalInfo: personalInfo("Doe") });
    expect(o.beneficialOwner!.kycStatus).toBe("PENDING");
  });

  it("refuse a regulated production platform's verification with 400 KYC_MANAGED_BY_PLATFORM, storing nothing", async () => {
    const platformId = h.platform({ environment: "PRODUCTION", isRegulated: true });
    const { customer } = await h.client.createCustomer({ platformId, customer: individual() });
    await expectPublicError(h.client.createVerification({ platformId, customerId: customer!.id }), "INVALID", "KYC_MANAGED_BY_PLATFORM");
    expect((await h.client.listVerifications({ platformId, customerId: customer!.id })).verifications).toHaveLength(0);
    expect((await h.admin.listReviews({ platformId })).reviews).toHaveLength(0);
  });
});

describe("invitations", () => {
  it("builds the url from CORRIDOR_INVITATION_BASE_URL and draws another code on a collision", async () => {
    const platformId = h.platform();
    const { customer } = await h.client.createCustomer({ platformId, customer: individual() });
    const first = await h.client.createInvitation({ platformId, inviterUma: customer!.umaAddress });
    expect(first.invitation).toMatchObject({ code: "fixedCode1", url: "https://invite.example/u/fixedCode1", status: "PENDING", inviterCustomerId: customer!.id });
    const second = await h.client.createInvitation({ platformId, inviterUma: customer!.umaAddress });
    expect(second.invitation!.code).toBe("fixedCode2");
  });

  it("expires by the clock: reads EXPIRED and refuses a claim with 400 INVITATION_EXPIRED", async () => {
    const platformId = h.platform();
    const { customer } = await h.client.createCustomer({ platformId, customer: individual() });
    const expiresAt = new Date(h.clock.now().getTime() + 60_000);
    const { invitation } = await h.client.createInvitation({ platformId, inviterUma: customer!.umaAddress, expiresAt: timestampFromDate(expiresAt) });
    h.clock.advance(59_999);
    expect((await h.client.getInvitation({ platformId, code: invitation!.code })).invitation!.status).toBe("PENDING");
    h.clock.advance(1);
    expect((await h.client.getInvitation({ platformId, code: invitation!.code })).invitation!.status).toBe("EXPIRED");
    await expectPublicError(h.client.claimInvitation({ platformId, code: invitation!.code, inviteeUma: "$bob@x.example" }), "INVALID", "INVITATION_EXPIRED");
    await expectPublicError(h.client.cancelInvitation({ platformId, code: invitation!.code }), "INVALID", "INVITATION_EXPIRED");
  });

  it("expires by a sandbox platform's sandbox clock: advancing it past expiresAt reads EXPIRED with the service clock unmoved, and expiresAt must be ahead of the sandbox time", async () => {
    const platformId = h.platform({ environment: "SANDBOX" });
    const { customer } = await h.client.createCustomer({ platformId, customer: individual() });
    const expiresAt = new Date(h.clock.now().getTime() + 60_000);
    const { invitation } = await h.client.createInvitation({ platformId, inviterUma: customer!.umaAddress, expiresAt: timestampFromDate(expiresAt) });
    h.sandboxOffsets.set(platformId, 59_999);
    expect((await h.client.getInvitation({ platformId, code: invitation!.code })).invitation!.status).toBe("PENDING");
    h.sandboxOffsets.set(platformId, 60_000);
    expect((await h.client.getInvitation({ platformId, code: invitation!.code })).invitation!.status).toBe("EXPIRED");
    await expectPublicError(h.client.claimInvitation({ platformId, code: invitation!.code, inviteeUma: "$bob@x.example" }), "INVALID", "INVITATION_EXPIRED");
    await expectPublicError(h.client.cancelInvitation({ platformId, code: invitation!.code }), "INVALID", "INVITATION_EXPIRED");
    const stale = await expectPublicError(h.client.createInvitation({ platformId, inviterUma: customer!.umaAddress, expiresAt: timestampFromDate(expiresAt) }), "INVALID", "INVALID_INPUT");
    expect(JSON.stringify(stale.details)).toContain("expiresAt");
  });

  it("a production platform's invitations ignore any sandbox offset", async () => {
    const platformId = h.platform({ environment: "PRODUCTION" });
    const { customer } = await h.client.createCustomer({ platformId, customer: individual() });
    const { invitation } = await h.client.createInvitation({ platformId, inviterUma: customer!.umaAddress, expiresAt: timestampFromDate(new Date(h.clock.now().getTime() + 60_000)) });
    h.sandboxOffsets.set(platformId, 3_600_000);
    expect((await h.client.getInvitation({ platformId, code: invitation!.code })).invitation!.status).toBe("PENDING");
  });

  it("emits INVITATION_CLAIMED keyed by the inviter when claimed", async () => {
    const platformId = h.platform();
    const { customer } = await h.client.createCustomer({ platformId, customer: individual() });
    const { invitation } = await h.client.createInvitation({ platformId, inviterUma: customer!.umaAddress, amountToSend: 500n });
    expect(invitation).toMatchObject({ amountToSend: 500n, amountCurrency: "USD" });
    const start = (await h.events()).length;
    await h.client.claimInvitation({ platformId, code: invitation!.code, inviteeUma: "$Bob@X.example" });
    const evs = await eventsAfter(start);
    expect(evs.map((e) => [e.type, e.key])).toEqual([["INVITATION_CLAIMED", customer!.id]]);
    const p = evs[0]!.event.payload;
    if (p.case === "invitationUpdated") expect(p.value.invitation).toMatchObject({ status: "CLAIMED", inviteeUma: "$bob@x.example" });
  });
});
