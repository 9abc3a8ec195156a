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
    await expectPublicError(h.client.getCustomerSummary({ platformId: other, customerId: customer!.id }), 404, "CUSTOMER_NOT_FOUND");
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
    expect(evs.every((e) => e.topic === topics.customers && e.event.platformId === platformId)).toBe(true);
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
    const err = await expectPublicError(h.client.createCustomer({ platformId, customer: individual({ region: "XX", birthDate: "2031-01-01" }) }), 400, "INVALID_INPUT");
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

describe("production platforms", () => {
  it("keep verifications and owner KYC PENDING whatever the names say (no sandbox magic)", async () => {
    const platformId = h.platform({ environment: "PRODUCTION" });
    const { customer } = await h.client.createCustomer({ platformId, customer: individual({ fullName: "Magic Approve" }) });
    const v = await h.client.createVerification({ platformId, customerId: customer!.id });
    expect(v.verification!.verificationStatus).toBe("PENDING");
    const biz = await h.client.createCustomer({ platformId, customer: business("X-999") });
    const o = await h.client.createBeneficialOwner({ platformId, customerId: biz.customer!.id, roles: ["DIRECTOR"], personalInfo: personalInfo("Doe") });
    expect(o.beneficialOwner!.kycStatus).toBe("PENDING");
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

  it("expires by the clock: reads EXPIRED and refuses a claim with 409 INVITATION_EXPIRED", async () => {
    const platformId = h.platform();
    const { customer } = await h.client.createCustomer({ platformId, customer: individual() });
    const expiresAt = new Date(h.clock.now().getTime() + 60_000);
    const { invitation } = await h.client.createInvitation({ platformId, inviterUma: customer!.umaAddress, expiresAt: timestampFromDate(expiresAt) });
    h.clock.advance(59_999);
    expect((await h.client.getInvitation({ platformId, code: invitation!.code })).invitation!.status).toBe("PENDING");
    h.clock.advance(1);
    expect((await h.client.getInvitation({ platformId, code: invitation!.code })).invitation!.status).toBe("EXPIRED");
    await expectPublicError(h.client.claimInvitation({ platformId, code: invitation!.code, inviteeUma: "$bob@x.example" }), 409, "INVITATION_EXPIRED");
    await expectPublicError(h.client.cancelInvitation({ platformId, code: invitation!.code }), 409, "INVITATION_EXPIRED");
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
