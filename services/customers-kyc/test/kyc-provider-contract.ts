import { create } from "@bufbuild/protobuf";
import { AddressSchema, BusinessInfoSchema, CustomerInputSchema, PersonalInfoSchema } from "@corridor/proto/corridor/customers_kyc/v1/customer_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Harness } from "./harness.js";

/**
 * The KYC provider connector contract suite (docs/connectors.md, "KYC provider connector"). Every
 * provider connector runs it from its own test, as the review queue does
 * (review-queue-contract.test.ts): the suite drives customers-kyc through its RPCs as the gateway
 * would, and the connector's test tells it how to see the provider's open requests and how to make
 * the provider's far side answer (the operator's decision, a provider's webhook, a result file).
 */
export interface ProviderSubject {
  platformId: string;
  customerId: string;
  subjectKind: "CUSTOMER" | "BENEFICIAL_OWNER";
  /** The customer's id, or the beneficial owner's. */
  subjectId: string;
}

export interface ProviderUnderTest {
  /** customers-kyc built with the connector in place of the default (startHarness({ kycProvider })). */
  h: Harness;
  /** The requests the provider holds open for a platform: one per subject waiting for an answer. */
  openRequests(platformId: string): Promise<ProviderSubject[]>;
  /** The provider answers a subject, and the answer is applied before this resolves. */
  answer(subject: ProviderSubject, outcome: "APPROVED" | "REJECTED" | "MORE_INFO_REQUESTED", reason: string): Promise<void>;
  /**
   * The same answer delivered again (a retried webhook, a file read twice). It must change
   * nothing; the connector may refuse it (resolve or reject: the suite checks only that nothing changed).
   */
  answerAgain(subject: ProviderSubject, outcome: "APPROVED" | "REJECTED" | "MORE_INFO_REQUESTED", reason: string): Promise<void>;
  close(): Promise<void>;
}

const address = create(AddressSchema, { line1: "1 Main St", postalCode: "94105", country: "US" });
let n = 0;
const individual = () =>
  create(CustomerInputSchema, { customerType: "INDIVIDUAL", platformCustomerId: `contract-${++n}`, fullName: "Ada Lovelace", birthDate: "1990-04-01", nationality: "US", address });
const business = () =>
  create(CustomerInputSchema, {
    customerType: "BUSINESS",
    platformCustomerId: `contract-biz-${++n}`,
    address,
    businessInfo: create(BusinessInfoSchema, { legalName: "Analytical Engines Ltd", registrationNumber: "R-1", taxId: "12-3" }),
  });
const personalInfo = (lastName: string) =>
  create(PersonalInfoSchema, { firstName: "Jane", lastName, birthDate: "1980-01-01", nationality: "US", address, idType: "EIN", identifier: "12-3456789" });

export function kycProviderContractSuite(name: string, start: () => Promise<ProviderUnderTest>): void {
  describe(`KYC provider contract: ${name}`, () => {
    let t: ProviderUnderTest;
    beforeAll(async () => {
      t = await start();
    });
    afterAll(async () => t?.close());

    const typesAfter = async (before: number) => (await t.h.events()).slice(before).map((e) => e.type);
    const snapshot = async (platformId: string, customerId: string, verificationId: string) => ({
      customer: (await t.h.client.getCustomer({ platformId, customerId })).customer!.verificationStatus,
      verification: (await t.h.client.getVerification({ platformId, verificationId })).verification!,
      events: (await t.h.events()).length,
    });

    it("gets one request per subject however often the platform asks, and an approval moves the customer and the verification with the sandbox path's events", async () => {
      const platformId = t.h.platform({ environment: "PRODUCTION" });
      const customer = (await t.h.client.createCustomer({ platformId, customer: individual() })).customer!;
      const v = (await t.h.client.createVerification({ platformId, customerId: customer.id })).verification!;
      expect(v.verificationStatus).toBe("PENDING");
      expect((await t.h.client.createVerification({ platformId, customerId: customer.id })).verification!.id).toBe(v.id);
      const open = await t.openRequests(platformId);
      expect(open).toEqual([{ platformId, customerId: customer.id, subjectKind: "CUSTOMER", subjectId: customer.id }]);

      const before = (await t.h.events()).length;
      await t.answer(open[0]!, "APPROVED", "");
      expect(await typesAfter(before)).toEqual(["CUSTOMER_UPDATED", "CUSTOMER_KYC_APPROVED", "VERIFICATION_APPROVED"]);
      const after = await snapshot(platformId, customer.id, v.id);
      expect([after.customer, after.verification.verificationStatus]).toEqual(["APPROVED", "APPROVED"]);
      expect(await t.openRequests(platformId)).toEqual([]);

      // A duplicate answer changes nothing.
      await t.answerAgain(open[0]!, "APPROVED", "").catch(() => undefined);
      expect(await snapshot(platformId, customer.id, v.id)).toEqual(after);
    });

    it("carries a rejection's reason to the verification's errors, and a rejection is final", async () => {
      const platformId = t.h.platform({ environment: "PRODUCTION" });
      const customer = (await t.h.client.createCustomer({ platformId, customer: individual() })).customer!;
      const v = (await t.h.client.createVerification({ platformId, customerId: customer.id })).verification!;
      const [subject] = await t.openRequests(platformId);
      await t.answer(subject!, "REJECTED", "the document does not match the name");
      const after = await snapshot(platformId, customer.id, v.id);
      expect(after.customer).toBe("REJECTED");
      expect(after.verification.verificationStatus).toBe("REJECTED");
      expect(after.verification.errors.map((e) => e.reason)).toEqual(["the document does not match the name"]);
      // A late contrary answer changes nothing either.
      await t.answerAgain(subject!, "APPROVED", "").catch(() => undefined);
      expect(await snapshot(platformId, customer.id, v.id)).toEqual(after);
    });

    it("asks for more information (RESOLVE_ERRORS, the customer stays PENDING); the resubmission reaches the provider as the same open request", async () => {
      const platformId = t.h.platform({ environment: "PRODUCTION" });
      const customer = (await t.h.client.createCustomer({ platformId, customer: individual() })).customer!;
      const first = (await t.h.client.createVerification({ platformId, customerId: customer.id })).verification!;
      const [subject] = await t.openRequests(platformId);
      await t.answer(subject!, "MORE_INFO_REQUESTED", "upload the back of the ID");
      const mid = await snapshot(platformId, customer.id, first.id);
      expect([mid.customer, mid.verification.verificationStatus, mid.verification.errors[0]?.reason]).toEqual(["PENDING", "RESOLVE_ERRORS", "upload the back of the ID"]);

      const second = (await t.h.client.createVerification({ platformId, customerId: customer.id })).verification!;
      expect(second.id).not.toBe(first.id);
      expect(await t.openRequests(platformId)).toEqual([subject]);
      await t.answer(subject!, "APPROVED", "");
      expect((await snapshot(platformId, customer.id, second.id)).verification.verificationStatus).toBe("APPROVED");
    });

    it("verifies a business's owners as subjects of their own, and the business only after them", async () => {
      const platformId = t.h.platform({ environment: "PRODUCTION" });
      const biz = (await t.h.client.createCustomer({ platformId, customer: business() })).customer!;
      const o1 = (await t.h.client.createBeneficialOwner({ platformId, customerId: biz.id, roles: ["UBO"], ownershipPercentage: 60, personalInfo: personalInfo("One") })).beneficialOwner!;
      const o2 = (await t.h.client.createBeneficialOwner({ platformId, customerId: biz.id, roles: ["DIRECTOR"], personalInfo: personalInfo("Two") })).beneficialOwner!;
      const v = (await t.h.client.createVerification({ platformId, customerId: biz.id })).verification!;
      const open = await t.openRequests(platformId);
      const key = (s: ProviderSubject) => `${s.subjectKind} ${s.subjectId}`;
      expect(open.map(key).sort()).toEqual([`CUSTOMER ${biz.id}`, `BENEFICIAL_OWNER ${o1.id}`, `BENEFICIAL_OWNER ${o2.id}`].sort());
      for (const owner of open.filter((s) => s.subjectKind === "BENEFICIAL_OWNER")) {
        const before = (await t.h.events()).length;
        await t.answer(owner, "APPROVED", "");
        expect(await typesAfter(before)).toEqual(["BENEFICIAL_OWNER_UPDATED"]);
      }
      for (const o of [o1, o2]) expect((await t.h.client.getBeneficialOwner({ platformId, beneficialOwnerId: o.id })).beneficialOwner!.kycStatus).toBe("APPROVED");
      expect((await t.h.client.getVerification({ platformId, verificationId: v.id })).verification!.verificationStatus).toBe("PENDING");
      const before = (await t.h.events()).length;
      await t.answer(open.find((s) => s.subjectKind === "CUSTOMER")!, "APPROVED", "");
      expect(await typesAfter(before)).toEqual(["CUSTOMER_UPDATED", "CUSTOMER_KYB_APPROVED", "VERIFICATION_APPROVED"]);
    });

    it("never receives a sandbox platform's customers nor a regulated platform's", async () => {
      const sandbox = t.h.platform({ environment: "SANDBOX" });
      const c1 = (await t.h.client.createCustomer({ platformId: sandbox, customer: individual() })).customer!;
      await t.h.client.createVerification({ platformId: sandbox, customerId: c1.id });
      expect(await t.openRequests(sandbox)).toEqual([]);
      const regulated = t.h.platform({ environment: "PRODUCTION", isRegulated: true });
      const c2 = (await t.h.client.createCustomer({ platformId: regulated, customer: individual() })).customer!;
      await t.h.client.createVerification({ platformId: regulated, customerId: c2.id }).catch(() => undefined);
      expect(await t.openRequests(regulated)).toEqual([]);
    });
  });
}
