import { createClient, type Client } from "@connectrpc/connect";
import { KycAdminService } from "@corridor/proto/corridor/customers_kyc/v1/kyc_admin_service_pb.js";
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { business, individual, uniq } from "./customers-fixtures.js";
import { eventually, mode, skipReason, startTestSystem, type Caller, type TestSystem } from "./harness.js";

/**
 * Production KYC/KYB through the operator's review queue (issue 25 items 1 and 2), through the
 * public API and the internal admin RPC the operator CLI uses (`npm run admin -- kyc ...`): a
 * production platform's individual and business (with an owner) upload documents, submit the
 * hosted KYC page, and the operator approves one and rejects the other; each change is an event.
 */
describe.skipIf(skipReason())(`production KYC review and documents (${mode})`, () => {
  let system: TestSystem;
  let p: Caller;
  let admin: Client<typeof KycAdminService>;

  beforeAll(async () => {
    system = await startTestSystem();
    p = await system.createPlatform({ name: "KYC review e2e", environment: "PRODUCTION" });
    admin = createClient(KycAdminService, system.transportFor("customers-kyc"));
  });
  afterAll(async () => {
    await system?.stop();
  });

  const PDF = Buffer.from("%PDF-1.7\n1 0 obj\n<<>>\nendobj\ntrailer\n<<>>\n%%EOF\n");
  const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46, 0, 1]);
  const form = (fields: Record<string, string>, file?: { bytes: Buffer; type: string; name: string }) => {
    const f = new FormData();
    for (const [k, v] of Object.entries(fields)) f.append(k, v);
    if (file) f.append("file", new Blob([file.bytes], { type: file.type }), file.name);
    return f;
  };
  const upload = (holder: string, file = { bytes: PDF, type: "application/pdf", name: "passport.pdf" }, caller = p) =>
    caller.call("POST", "/documents", form({ documentHolder: holder, documentType: "PASSPORT", country: "US", side: "FRONT" }, file));
  const events = async (type: string, id: string) => (await p.call("GET", `/events?type=${type}&limit=100`)).body.data.filter((e: { payload: { data: { id: string } } }) => e.payload.data.id === id);
  const expectEvent = (type: string, id: string) => eventually(async () => ((await events(type, id)).length > 0 ? true : undefined));
  const complete = (kycUrl: string) => system.raw("POST", new URL(kycUrl).pathname, { body: "", headers: { "content-type": "application/x-www-form-urlencoded" } });
  const reviewOf = async (subjectId: string) => {
    const { reviews } = await admin.listReviews({ platformId: p.platformId });
    const r = reviews.find((x) => x.subjectId === subjectId);
    expect(r, `a review of ${subjectId}`).toBeDefined();
    return r!;
  };

  it("verifies an individual through the hosted page and the operator's approval, with events for each change", async () => {
    const c = (await p.call("POST", "/customers", individual({ platformCustomerId: uniq("prod-ind") }))).body;
    const doc = await upload(c.id);
    expect(doc.status, JSON.stringify(doc.body)).toBe(201);
    expect(doc.body).toMatchObject({ documentHolder: c.id, documentType: "PASSPORT", side: "FRONT", contentType: "application/pdf", sizeBytes: PDF.length });
    expect(doc.body.sha256).toBe(createHash("sha256").update(PDF).digest("hex"));
    expect((await p.call("GET", `/documents/${doc.body.id}`)).body).toEqual(doc.body);
    expect((await p.call("GET", `/documents?documentHolder=${encodeURIComponent(c.id)}`)).body).toMatchObject({ data: [doc.body], totalCount: 1 });

    const link = await p.call("POST", `/customers/${c.id}/kyc-link`);
    expect(link.status, JSON.stringify(link.body)).toBe(200);
    // The customer adds a document on the hosted page: stored as the customer's, the page lists it.
    const pagePath = new URL(link.body.kycUrl).pathname;
    const pageUpload = await system.raw("POST", `${pagePath}/documents`, {
      body: form({ documentType: "PROOF_OF_ADDRESS", country: "US" }, { bytes: JPEG, type: "image/jpeg", name: "bill.jpg" }),
    });
    // 303 back to the page (fetch follows it), which now lists the document.
    expect(pageUpload.status).toBe(200);
    expect(pageUpload.body).toContain("PROOF_OF_ADDRESS: bill.jpg");
    const fakeOnPage = await system.raw("POST", `${pagePath}/documents`, {
      body: form({ documentType: "PASSPORT", country: "US" }, { bytes: Buffer.from("not an image"), type: "image/png", name: "x.png" }),
    });
    expect(fakeOnPage.status).toBe(400);
    expect(fakeOnPage.body).toContain("This document was not accepted");
    const page = await complete(link.body.kycUrl);
    expect(page.status).toBe(200);
    expect(page.body).toContain(">PENDING<");
    expect((await p.call("GET", `/customers/${c.id}`)).body.kycStatus).toBe("PENDING");
    await expectEvent("CUSTOMER_KYC_PENDING", c.id);

    const r = await reviewOf(c.id);
    expect(r).toMatchObject({ status: "SUBMITTED", subjectType: "INDIVIDUAL", displayName: "Alice Smith" });
    const shown = await admin.getReview({ reviewId: r.id });
    expect(shown.documents.map((d) => [d.documentType, d.sha256, Number(d.sizeBytes)]).sort()).toEqual(
      [
        ["PASSPORT", doc.body.sha256, PDF.length],
        ["PROOF_OF_ADDRESS", createHash("sha256").update(JPEG).digest("hex"), JPEG.length],
      ].sort(),
    );
    expect(Buffer.from((await admin.getDocumentContent({ documentId: doc.body.id })).content).equals(PDF)).toBe(true);

    await admin.decideReview({ reviewId: r.id, decision: "APPROVE" });
    expect((await p.call("GET", `/customers/${c.id}`)).body.kycStatus).toBe("APPROVED");
    const v = (await p.call("GET", `/verifications?customerId=${encodeURIComponent(c.id)}`)).body.data;
    expect(v.map((x: { verificationStatus: string }) => x.verificationStatus)).toEqual(["APPROVED"]);
    await expectEvent("CUSTOMER_KYC_APPROVED", c.id);
    await expectEvent("VERIFICATION_APPROVED", v[0].id);
    // The decision used the document: it can no longer change.
    const replace = await p.call("PUT", `/documents/${doc.body.id}`, form({ documentType: "PASSPORT", country: "US" }, { bytes: PDF, type: "application/pdf", name: "again.pdf" }));
    expect(replace.status).toBe(409);
    expect(replace.body.code).toBe("DOCUMENT_IN_USE");
    expect((await p.call("DELETE", `/documents/${doc.body.id}`)).body.code).toBe("DOCUMENT_IN_USE");
  });

  it("reviews a business and its owner: the owner approved, the business rejected with its reason", async () => {
    const b = (await p.call("POST", "/customers", business({ platformCustomerId: uniq("prod-biz") }))).body;
    const owner = await p.call("POST", "/beneficial-owners", {
      customerId: b.id,
      roles: ["UBO"],
      ownershipPercentage: 100,
      personalInfo: { firstName: "Olga", lastName: "Owner", birthDate: "1980-01-01", nationality: "US", address: { line1: "1 Main St", postalCode: "94105", country: "US" }, idType: "SSN", identifier: "123-45-6789" },
    });
    expect(owner.status, JSON.stringify(owner.body)).toBe(201);
    expect(owner.body.kycStatus).toBe("PENDING");
    expect((await upload(b.id, { bytes: PDF, type: "application/pdf", name: "incorporation.pdf" })).status).toBe(201);
    const ownerDoc = await upload(owner.body.id, { bytes: JPEG, type: "image/jpeg", name: "id.jpg" });
    expect(ownerDoc.status, JSON.stringify(ownerDoc.body)).toBe(201);
    // Replace before any decision: allowed.
    const replaced = await p.call("PUT", `/documents/${ownerDoc.body.id}`, form({ documentType: "DRIVERS_LICENSE", country: "US", side: "BACK" }, { bytes: PDF, type: "application/pdf", name: "dl.pdf" }));
    expect(replaced.status, JSON.stringify(replaced.body)).toBe(200);
    expect(replaced.body).toMatchObject({ id: ownerDoc.body.id, documentHolder: owner.body.id, documentType: "DRIVERS_LICENSE", contentType: "application/pdf" });

    const v = await p.call("POST", "/verifications", { customerId: b.id });
    expect(v.status, JSON.stringify(v.body)).toBe(200);
    expect(v.body.verificationStatus).toBe("PENDING");
    expect((await p.call("GET", `/customers/${b.id}`)).body.kybStatus).toBe("PENDING");

    const ownerReview = await reviewOf(owner.body.id);
    expect(ownerReview.subjectType).toBe("OWNER");
    const bizReview = await reviewOf(b.id);
    expect((await admin.getReview({ reviewId: bizReview.id })).documents).toHaveLength(2);
    await admin.decideReview({ reviewId: ownerReview.id, decision: "APPROVE" });
    expect((await p.call("GET", `/beneficial-owners/${owner.body.id}`)).body.kycStatus).toBe("APPROVED");
    await admin.decideReview({ reviewId: bizReview.id, decision: "REJECT", reason: "registration number does not match the registry" });

    const after = (await p.call("GET", `/verifications/${v.body.id}`)).body;
    expect(after.verificationStatus).toBe("REJECTED");
    expect(after.errors).toEqual([{ type: "INVALID_FIELD", field: "review", reason: "registration number does not match the registry" }]);
    expect((await p.call("GET", `/customers/${b.id}`)).body.kybStatus).toBe("REJECTED");
    await expectEvent("CUSTOMER_KYB_REJECTED", b.id);
    await expectEvent("VERIFICATION_REJECTED", v.body.id);
    // An owner's decision is a BENEFICIAL_OWNER_UPDATED event on corridor.customers.unconsumed.v1 (no webhook type, as in sandbox; unit-tested).
    const again = await p.call("POST", "/verifications", { customerId: b.id });
    expect(again.status).toBe(400);
    expect(again.body.code).toBe("CUSTOMER_ALREADY_REJECTED");
  });

  it("refuses bad documents in the error shape: wrong type, oversize, fake PDF bytes, not multipart, another platform's document", async () => {
    const c = (await p.call("POST", "/customers", individual({ platformCustomerId: uniq("prod-bad") }))).body;
    const gif = await upload(c.id, { bytes: Buffer.from("GIF89a...."), type: "image/gif", name: "a.gif" });
    expect(gif.status).toBe(400);
    expect(gif.body).toMatchObject({ status: 400, code: "INVALID_INPUT" });
    expect(gif.body.details.errors.map((e: { field: string }) => e.field)).toEqual(["body.file"]);
    const fake = await upload(c.id, { bytes: Buffer.from("<html>not a pdf</html>"), type: "application/pdf", name: "fake.pdf" });
    expect(fake.status).toBe(400);
    expect(fake.body.details.errors[0].reason).toMatch(/bytes are not application\/pdf/);
    const big = Buffer.alloc(10 * 1024 * 1024 + 1);
    PDF.copy(big);
    const over = await upload(c.id, { bytes: big, type: "application/pdf", name: "big.pdf" });
    expect(over.status).toBe(400);
    expect(over.body.details.errors[0]).toMatchObject({ field: "body.file" });
    const json = await p.call("POST", "/documents", { documentHolder: c.id });
    expect(json.status).toBe(415);
    expect(json.body.code).toBe("UNSUPPORTED_MEDIA_TYPE");
    const noFile = await p.call("POST", "/documents", form({ documentHolder: c.id, documentType: "PASSPORT", country: "US" }));
    expect(noFile.status).toBe(400);
    expect((await p.call("GET", `/documents?documentHolder=${encodeURIComponent(c.id)}`)).body.totalCount).toBe(0);

    const other = await system.createPlatform({ name: "KYC review other", environment: "PRODUCTION" });
    const mine = await upload(c.id);
    expect(mine.status).toBe(201);
    for (const res of [
      await other.call("GET", `/documents/${mine.body.id}`),
      await other.call("DELETE", `/documents/${mine.body.id}`),
      await other.call("PUT", `/documents/${mine.body.id}`, form({ documentType: "PASSPORT", country: "US" }, { bytes: PDF, type: "application/pdf", name: "x.pdf" })),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body.code).toBe("DOCUMENT_NOT_FOUND");
    }
    const foreignHolder = await upload(c.id, undefined, other);
    expect(foreignHolder.status).toBe(404);
    expect(foreignHolder.body.code).toBe("USER_NOT_FOUND");
    expect((await p.call("DELETE", `/documents/${mine.body.id}`)).status).toBe(204);
    expect((await p.call("GET", `/documents/${mine.body.id}`)).status).toBe(404);
  });

  it("answers a regulated production platform's verification 400 KYC_MANAGED_BY_PLATFORM, never 501", async () => {
    const reg = await system.createPlatform({ name: "KYC review regulated", environment: "PRODUCTION", regulated: true });
    const c = (await reg.call("POST", "/customers", individual({ platformCustomerId: uniq("reg") }))).body;
    const v = await reg.call("POST", "/verifications", { customerId: c.id });
    expect(v.status).toBe(400);
    expect(v.body.code).toBe("KYC_MANAGED_BY_PLATFORM");
    const set = await reg.call("PATCH", `/customers/${c.id}`, { kycStatus: "APPROVED" });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
  });
});
