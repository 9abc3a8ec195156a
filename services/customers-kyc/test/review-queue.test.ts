import { create } from "@bufbuild/protobuf";
import { AddressSchema, BusinessInfoSchema, CustomerInputSchema, PersonalInfoSchema } from "@corridor/proto/corridor/customers_kyc/v1/customer_pb.js";
import { DocumentInputSchema } from "@corridor/proto/corridor/customers_kyc/v1/document_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nextReviewStatus, resubmitted } from "../src/domain/review-queue.js";
import { sniffContentType } from "../src/domain/documents.js";
import type { KycReview } from "../src/domain/types.js";
import { expectPublicError, fieldsOf, startHarness, type Harness } from "./harness.js";

/** The operator's review queue (the KYC provider connector that ships) and KYC documents. */
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ env: { CORRIDOR_KYC_DOCUMENT_MAX_BYTES: "2048" } });
});
afterAll(async () => {
  await h?.close();
});

const address = create(AddressSchema, { line1: "1 Main St", postalCode: "94105", country: "US" });
let n = 0;
const individual = () =>
  create(CustomerInputSchema, { customerType: "INDIVIDUAL", platformCustomerId: `rq-${++n}`, fullName: "Alice Smith", birthDate: "1990-04-01", nationality: "US", address });
const business = () =>
  create(CustomerInputSchema, {
    customerType: "BUSINESS",
    platformCustomerId: `rq-biz-${++n}`,
    address,
    businessInfo: create(BusinessInfoSchema, { legalName: "Acme", registrationNumber: "R-1", taxId: "12-3" }),
  });
const personalInfo = (lastName: string) =>
  create(PersonalInfoSchema, { firstName: "Jane", lastName, birthDate: "1980-01-01", nationality: "US", address, idType: "EIN", identifier: "12-3456789" });

const PDF = new TextEncoder().encode("%PDF-1.7\n1 0 obj\n<<>>\nendobj\n%%EOF\n");
const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);
const doc = (holder: string, content: Uint8Array = PDF, contentType = "application/pdf", extra: Record<string, unknown> = {}) =>
  create(DocumentInputSchema, { documentHolder: holder, documentType: "PASSPORT", country: "US", fileName: "passport.pdf", declaredContentType: contentType, content, ...extra });

const eventTypesAfter = async (before: number) => (await h.events()).slice(before).map((e) => e.type);

const review = (status: KycReview["status"]): KycReview => ({
  id: "KycReview:x",
  platformId: "p",
  customerId: "c",
  subjectKind: "CUSTOMER",
  subjectId: "c",
  verificationId: "v1",
  status,
  reason: "blurry",
  submissions: 1,
  createdAt: new Date(0),
  updatedAt: new Date(0),
});

describe("review state machine", () => {
  it("decides only SUBMITTED reviews: approve, reject or request information", () => {
    expect(nextReviewStatus("SUBMITTED", "APPROVE")).toBe("APPROVED");
    expect(nextReviewStatus("SUBMITTED", "REJECT")).toBe("REJECTED");
    expect(nextReviewStatus("SUBMITTED", "REQUEST_INFO")).toBe("MORE_INFO_REQUESTED");
    for (const from of ["APPROVED", "REJECTED", "MORE_INFO_REQUESTED"] as const) {
      for (const d of ["APPROVE", "REJECT", "REQUEST_INFO"] as const) expect(() => nextReviewStatus(from, d)).toThrow(/final|resubmit/);
    }
  });

  it("reopens a MORE_INFO_REQUESTED review on resubmission (counted, reason cleared) and never a decided one", () => {
    const again = resubmitted(review("MORE_INFO_REQUESTED"), "v2", new Date(5));
    expect(again).toMatchObject({ status: "SUBMITTED", reason: "", submissions: 2, verificationId: "v2" });
    expect(resubmitted(review("SUBMITTED"), "v2", new Date(5))).toMatchObject({ status: "SUBMITTED", submissions: 1, verificationId: "v2" });
    expect(() => resubmitted(review("APPROVED"), "v2", new Date(5))).toThrow();
    expect(() => resubmitted(review("REJECTED"), "v2", new Date(5))).toThrow();
  });
});

describe("production verification through the review queue", () => {
  it("approves an individual: customer and verification APPROVED with the sandbox path's events; a second decision is 409", async () => {
    const platformId = h.platform({ environment: "PRODUCTION" });
    const { customer } = await h.client.createCustomer({ platformId, customer: individual() });
    const before = (await h.events()).length;
    const { verification } = await h.client.createVerification({ platformId, customerId: customer!.id });
    expect(verification!.verificationStatus).toBe("PENDING");
    expect(await eventTypesAfter(before)).toEqual(["VERIFICATION_PENDING", "CUSTOMER_UPDATED", "CUSTOMER_KYC_PENDING"]);
    // Asking again while the review waits answers the same verification, and queues nothing new.
    expect((await h.client.createVerification({ platformId, customerId: customer!.id })).verification!.id).toBe(verification!.id);
    const [r] = (await h.admin.listReviews({ platformId, status: "SUBMITTED" })).reviews;
    expect(r).toMatchObject({ subjectKind: "CUSTOMER", subjectType: "INDIVIDUAL", displayName: "Alice Smith", verificationId: verification!.id });

    const mid = (await h.events()).length;
    const decided = await h.admin.decideReview({ reviewId: r!.id, decision: "APPROVE" });
    expect(decided.review!.status).toBe("APPROVED");
    expect(await eventTypesAfter(mid)).toEqual(["CUSTOMER_UPDATED", "CUSTOMER_KYC_APPROVED", "VERIFICATION_APPROVED"]);
    expect((await h.client.getCustomer({ platformId, customerId: customer!.id })).customer!.verificationStatus).toBe("APPROVED");
    expect((await h.client.getVerification({ platformId, verificationId: verification!.id })).verification!.verificationStatus).toBe("APPROVED");
    await expectPublicError(h.admin.decideReview({ reviewId: r!.id, decision: "REJECT", reason: "changed my mind" }), "CONFLICT", "INVALID_STATE_TRANSITION");
  });

  it("rejects with a reason shown in the verification's errors; a reason is required", async () => {
    const platformId = h.platform({ environment: "PRODUCTION" });
    const { customer } = await h.client.createCustomer({ platformId, customer: individual() });
    const { verification } = await h.client.createVerification({ platformId, customerId: customer!.id });
    const [r] = (await h.admin.listReviews({ platformId })).reviews;
    const err = await expectPublicError(h.admin.decideReview({ reviewId: r!.id, decision: "REJECT", reason: " " }), "INVALID", "INVALID_INPUT");
    expect(fieldsOf(err)).toEqual(["reason"]);
    await h.admin.decideReview({ reviewId: r!.id, decision: "REJECT", reason: "document does not match the name" });
    const v = (await h.client.getVerification({ platformId, verificationId: verification!.id })).verification!;
    expect(v.verificationStatus).toBe("REJECTED");
    expect(v.errors.map((e) => [e.field, e.reason])).toEqual([["review", "document does not match the name"]]);
    expect((await h.client.getCustomer({ platformId, customerId: customer!.id })).customer!.verificationStatus).toBe("REJECTED");
    await expectPublicError(h.client.createVerification({ platformId, customerId: customer!.id }), "INVALID", "CUSTOMER_ALREADY_REJECTED");
  });

  it("requests more information (verification RESOLVE_ERRORS, customer stays PENDING), then a resubmission reopens the same review", async () => {
    const platformId = h.platform({ environment: "PRODUCTION" });
    const { customer } = await h.client.createCustomer({ platformId, customer: individual() });
    const first = (await h.client.createVerification({ platformId, customerId: customer!.id })).verification!;
    const [r] = (await h.admin.listReviews({ platformId })).reviews;
    await h.admin.decideReview({ reviewId: r!.id, decision: "REQUEST_INFO", reason: "upload the back of the ID" });
    const v = (await h.client.getVerification({ platformId, verificationId: first.id })).verification!;
    expect(v.verificationStatus).toBe("RESOLVE_ERRORS");
    expect(v.errors[0]!.reason).toBe("upload the back of the ID");
    expect((await h.client.getCustomer({ platformId, customerId: customer!.id })).customer!.verificationStatus).toBe("PENDING");
    await expectPublicError(h.admin.decideReview({ reviewId: r!.id, decision: "APPROVE" }), "CONFLICT", "INVALID_STATE_TRANSITION");

    const second = (await h.client.createVerification({ platformId, customerId: customer!.id })).verification!;
    expect(second.id).not.toBe(first.id);
    expect(second.verificationStatus).toBe("PENDING");
    const { reviews } = await h.admin.listReviews({ platformId });
    expect(reviews.map((x) => [x.id, x.status, x.submissions, x.verificationId])).toEqual([[r!.id, "SUBMITTED", 2, second.id]]);
  });

  it("reviews a business's owners too: the business waits for them; owner decisions move the owner's kycStatus", async () => {
    const platformId = h.platform({ environment: "PRODUCTION" });
    const biz = (await h.client.createCustomer({ platformId, customer: business() })).customer!;
    const o1 = (await h.client.createBeneficialOwner({ platformId, customerId: biz.id, roles: ["UBO"], ownershipPercentage: 60, personalInfo: personalInfo("One") })).beneficialOwner!;
    const o2 = (await h.client.createBeneficialOwner({ platformId, customerId: biz.id, roles: ["DIRECTOR"], personalInfo: personalInfo("Two") })).beneficialOwner!;
    const v = (await h.client.createVerification({ platformId, customerId: biz.id })).verification!;
    const reviews = (await h.admin.listReviews({ platformId })).reviews;
    expect(reviews.map((r) => [r.subjectKind, r.subjectId])).toEqual([
      ["CUSTOMER", biz.id],
      ["BENEFICIAL_OWNER", o1.id],
      ["BENEFICIAL_OWNER", o2.id],
    ]);
    const [bizReview, r1, r2] = reviews;
    const refused = await expectPublicError(h.admin.decideReview({ reviewId: bizReview!.id, decision: "APPROVE" }), "CONFLICT", "INVALID_STATE_TRANSITION");
    expect(refused.message).toContain(o1.id);

    const before = (await h.events()).length;
    await h.admin.decideReview({ reviewId: r1!.id, decision: "APPROVE" });
    expect(await eventTypesAfter(before)).toEqual(["BENEFICIAL_OWNER_UPDATED"]);
    expect((await h.client.getBeneficialOwner({ platformId, beneficialOwnerId: o1.id })).beneficialOwner!.kycStatus).toBe("APPROVED");
    await h.admin.decideReview({ reviewId: r2!.id, decision: "APPROVE" });
    // The owners' approvals leave the business's verification to its own decision.
    expect((await h.client.getVerification({ platformId, verificationId: v.id })).verification!.verificationStatus).toBe("PENDING");
    const mid = (await h.events()).length;
    await h.admin.decideReview({ reviewId: bizReview!.id, decision: "APPROVE" });
    expect(await eventTypesAfter(mid)).toEqual(["CUSTOMER_UPDATED", "CUSTOMER_KYB_APPROVED", "VERIFICATION_APPROVED"]);
  });

  it("shows the review with its subject and documents (hash, size) and exports a document's bytes", async () => {
    const platformId = h.platform({ environment: "PRODUCTION" });
    const { customer } = await h.client.createCustomer({ platformId, customer: individual() });
    const { document } = await h.client.uploadDocument({ platformId, document: doc(customer!.id) });
    await h.client.createVerification({ platformId, customerId: customer!.id });
    const [r] = (await h.admin.listReviews({ platformId })).reviews;
    const shown = await h.admin.getReview({ reviewId: r!.id });
    expect(JSON.parse(shown.subjectJson)).toMatchObject({ id: customer!.id, fullName: "Alice Smith" });
    expect(shown.documents.map((d) => [d.id, d.sha256, d.sizeBytes])).toEqual([[document!.id, document!.sha256, BigInt(PDF.length)]]);
    const exported = await h.admin.getDocumentContent({ documentId: document!.id });
    expect(Buffer.from(exported.content).equals(Buffer.from(PDF))).toBe(true);
    await expectPublicError(h.admin.getReview({ reviewId: "KycReview:0190aaaa-0000-7000-8000-000000000000" }), "NOT_FOUND", "KYC_REVIEW_NOT_FOUND");
  });
});

describe("documents", () => {
  it("recognises PDF, JPEG and PNG by their magic bytes only", () => {
    expect(sniffContentType(PDF)).toBe("application/pdf");
    expect(sniffContentType(PNG)).toBe("image/png");
    expect(sniffContentType(new Uint8Array([0xff, 0xd8, 0xff, 0xe0]))).toBe("image/jpeg");
    expect(sniffContentType(new TextEncoder().encode("<html>%PDF-"))).toBeUndefined();
  });

  it("stores a document with its SHA-256 and size; lists, gets, replaces and deletes it", async () => {
    const platformId = h.platform();
    const { customer } = await h.client.createCustomer({ platformId, customer: individual() });
    const { document } = await h.client.uploadDocument({ platformId, document: doc(customer!.id, PDF, "application/pdf", { side: "FRONT", documentNumber: "A123" }) });
    expect(document).toMatchObject({ documentHolder: customer!.id, customerId: customer!.id, contentType: "application/pdf", sizeBytes: BigInt(PDF.length), side: "FRONT", documentNumber: "A123" });
    expect(document!.sha256).toBe("" + (await import("node:crypto")).createHash("sha256").update(PDF).digest("hex"));
    expect((await h.client.listDocuments({ platformId, documentHolder: customer!.id })).documents.map((d) => d.id)).toEqual([document!.id]);
    const replaced = (await h.client.replaceDocument({ platformId, documentId: document!.id, document: doc("", PNG, "image/png", { fileName: "p.png" }) })).document!;
    expect(replaced).toMatchObject({ id: document!.id, contentType: "image/png", sizeBytes: BigInt(PNG.length), fileName: "p.png", documentHolder: customer!.id });
    await h.client.deleteDocument({ platformId, documentId: document!.id });
    await expectPublicError(h.client.getDocument({ platformId, documentId: document!.id }), "NOT_FOUND", "DOCUMENT_NOT_FOUND");
  });

  it("refuses a disallowed type, bytes that are not what they claim, an oversize file, and another platform's document or holder", async () => {
    const platformId = h.platform();
    const { customer } = await h.client.createCustomer({ platformId, customer: individual() });
    const gif = await expectPublicError(h.client.uploadDocument({ platformId, document: doc(customer!.id, PDF, "image/gif") }), "INVALID", "INVALID_INPUT");
    expect(fieldsOf(gif)).toEqual(["file"]);
    const fake = await expectPublicError(h.client.uploadDocument({ platformId, document: doc(customer!.id, new TextEncoder().encode("not a pdf at all"), "application/pdf") }), "INVALID", "INVALID_INPUT");
    expect(fieldsOf(fake)).toEqual(["file"]);
    const big = new Uint8Array(2049);
    big.set(PDF);
    const over = await expectPublicError(h.client.uploadDocument({ platformId, document: doc(customer!.id, big) }), "INVALID", "INVALID_INPUT");
    expect(fieldsOf(over)).toEqual(["file"]);
    expect((await h.client.listDocuments({ platformId })).documents).toHaveLength(0);

    const other = h.platform();
    const { document } = await h.client.uploadDocument({ platformId, document: doc(customer!.id) });
    await expectPublicError(h.client.getDocument({ platformId: other, documentId: document!.id }), "NOT_FOUND", "DOCUMENT_NOT_FOUND");
    await expectPublicError(h.client.deleteDocument({ platformId: other, documentId: document!.id }), "NOT_FOUND", "DOCUMENT_NOT_FOUND");
    await expectPublicError(h.client.uploadDocument({ platformId: other, document: doc(customer!.id) }), "NOT_FOUND", "USER_NOT_FOUND");
  });

  it("answers 409 DOCUMENT_IN_USE to replacing or deleting a document a final decision used", async () => {
    const platformId = h.platform({ environment: "PRODUCTION" });
    const { customer } = await h.client.createCustomer({ platformId, customer: individual() });
    const { document } = await h.client.uploadDocument({ platformId, document: doc(customer!.id) });
    await h.client.createVerification({ platformId, customerId: customer!.id });
    const [r] = (await h.admin.listReviews({ platformId })).reviews;
    // A request for information is not final: the document may still be replaced.
    await h.admin.decideReview({ reviewId: r!.id, decision: "REQUEST_INFO", reason: "a sharper scan, please" });
    await h.client.replaceDocument({ platformId, documentId: document!.id, document: doc("", PDF) });
    await h.client.createVerification({ platformId, customerId: customer!.id });
    await h.admin.decideReview({ reviewId: r!.id, decision: "APPROVE" });
    expect((await h.client.getDocument({ platformId, documentId: document!.id })).document!.usedByReviewId).toBe(r!.id);
    await expectPublicError(h.client.replaceDocument({ platformId, documentId: document!.id, document: doc("", PDF) }), "CONFLICT", "DOCUMENT_IN_USE");
    await expectPublicError(h.client.deleteDocument({ platformId, documentId: document!.id }), "CONFLICT", "DOCUMENT_IN_USE");
  });
});
