import { create } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import { appErrorFromConnect, sql } from "@corridor/kit";
import { AddressSchema, CustomerInputSchema } from "@corridor/proto/corridor/customers_kyc/v1/customer_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONTACT_LIMITS } from "../src/domain/contact-verification.js";
import { expectPublicError, startHarness, type Harness } from "./harness.js";

// Contact verification against the real Postgres of the unit harness: codes are stored hashed,
// confirmed once, expire on the platform's clock, and the attempt limit binds under concurrency.

let h: Harness;
const sent: { platformId: string; channel: string; to: string; code: string }[] = [];
let nextCode = "";
beforeAll(async () => {
  h = await startHarness({
    codeSender: {
      async send(input) {
        sent.push(input);
        return true;
      },
    },
    newContactCode: () => nextCode || "135790",
  });
});
afterAll(async () => {
  await h?.close();
});

let n = 0;
const individual = (email = `alice${++n}@example.com`) =>
  create(CustomerInputSchema, {
    customerType: "INDIVIDUAL",
    platformCustomerId: `cv-${++n}`,
    email,
    fullName: "Alice Smith",
    birthDate: "1990-04-01",
    nationality: "US",
    address: create(AddressSchema, { line1: "1 Main St", postalCode: "94105", country: "US" }),
  });

async function customerWithEmail(environment: "SANDBOX" | "PRODUCTION" = "PRODUCTION") {
  const platformId = h.platform({ environment });
  const { customer } = await h.client.createCustomer({ platformId, customer: individual() });
  return { platformId, customerId: customer!.id, email: customer!.email };
}

describe("contact verification (customers-kyc)", () => {
  it("a customer with an email shows contactVerification.email PENDING; the delivered code confirms it VERIFIED, once", async () => {
    const { platformId, customerId, email } = await customerWithEmail();
    expect((await h.client.getCustomer({ platformId, customerId })).customer!.contactVerification?.email).toBe("PENDING");
    nextCode = "246801";
    await h.client.sendContactVerification({ platformId, customerId, channel: "EMAIL" });
    expect(sent.at(-1)).toMatchObject({ platformId, channel: "EMAIL", to: email, code: "246801" });
    // Only a hash is stored.
    const { rows } = await sql<{ code_sha256: string }>`select code_sha256 from customers_kyc.contact_verification_codes where customer_id = ${customerId}`.execute(h.db.root);
    expect(rows[0]!.code_sha256).not.toContain("246801");
    const res = await h.client.confirmContactVerification({ platformId, customerId, channel: "EMAIL", code: "246801" });
    expect(res.customer!.contactVerification?.email).toBe("VERIFIED");
    await expectPublicError(h.client.confirmContactVerification({ platformId, customerId, channel: "EMAIL", code: "246801" }), "CONFLICT", "CONTACT_ALREADY_VERIFIED");
    await expectPublicError(h.client.sendContactVerification({ platformId, customerId, channel: "EMAIL" }), "CONFLICT", "CONTACT_ALREADY_VERIFIED");
  });

  it("a changed email is PENDING again, and the old code does not verify the new address", async () => {
    const { platformId, customerId } = await customerWithEmail();
    nextCode = "111222";
    await h.client.sendContactVerification({ platformId, customerId, channel: "EMAIL" });
    await h.client.updateCustomer({ platformId, customerId, patch: create(CustomerInputSchema, { email: "new@example.com" }) });
    await expectPublicError(h.client.confirmContactVerification({ platformId, customerId, channel: "EMAIL", code: "111222" }), "INVALID", "VERIFICATION_CODE_NOT_SENT");
    nextCode = "333444";
    await h.client.sendContactVerification({ platformId, customerId, channel: "EMAIL" });
    const ok = await h.client.confirmContactVerification({ platformId, customerId, channel: "EMAIL", code: "333444" });
    expect(ok.customer!.contactVerification?.email).toBe("VERIFIED");
    const changed = await h.client.updateCustomer({ platformId, customerId, patch: create(CustomerInputSchema, { email: "other@example.com" }) });
    expect(changed.customer!.contactVerification?.email).toBe("PENDING");
  });

  it("rejects a code after 5 minutes on the platform's clock", async () => {
    const { platformId, customerId } = await customerWithEmail();
    nextCode = "555666";
    await h.client.sendContactVerification({ platformId, customerId, channel: "EMAIL" });
    h.clock.advance(CONTACT_LIMITS.codeMs);
    await expectPublicError(h.client.confirmContactVerification({ platformId, customerId, channel: "EMAIL", code: "555666" }), "INVALID", "VERIFICATION_CODE_EXPIRED");
  });

  it("counts 20 concurrent wrong guesses exactly to the limit of 5, after which even the right code is refused, and no new code is sent until that one expired", async () => {
    const { platformId, customerId } = await customerWithEmail();
    nextCode = "987654";
    await h.client.sendContactVerification({ platformId, customerId, channel: "EMAIL" });
    const guesses = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) => h.client.confirmContactVerification({ platformId, customerId, channel: "EMAIL", code: String(100000 + i) })),
    );
    const codes = guesses.map((g) => (g.status === "rejected" ? appErrorFromConnect(ConnectError.from(g.reason))?.code : "ACCEPTED"));
    expect(codes.filter((c) => c === "INVALID_VERIFICATION_CODE")).toHaveLength(CONTACT_LIMITS.attempts);
    expect(codes.filter((c) => c === "VERIFICATION_ATTEMPTS_EXCEEDED")).toHaveLength(20 - CONTACT_LIMITS.attempts);
    await expectPublicError(h.client.confirmContactVerification({ platformId, customerId, channel: "EMAIL", code: "987654" }), "INVALID", "VERIFICATION_ATTEMPTS_EXCEEDED");
    const sends = sent.length;
    h.clock.advance(CONTACT_LIMITS.codeMs - 1_000);
    await expectPublicError(h.client.sendContactVerification({ platformId, customerId, channel: "EMAIL" }), "RATE_LIMITED", "RATE_LIMITED");
    expect(sent.length, "no code delivered while the exhausted one lives").toBe(sends);
    h.clock.advance(1_000);
    nextCode = "192837";
    await h.client.sendContactVerification({ platformId, customerId, channel: "EMAIL" });
    expect((await h.client.confirmContactVerification({ platformId, customerId, channel: "EMAIL", code: "192837" })).customer!.contactVerification?.email).toBe("VERIFIED");
  });

  it("sends one code per 30 seconds, and a code sent again inherits the wrong guesses of the live one it replaces", async () => {
    const { platformId, customerId } = await customerWithEmail();
    nextCode = "500001";
    await h.client.sendContactVerification({ platformId, customerId, channel: "EMAIL" });
    for (const guess of ["600001", "600002", "600003"]) {
      await expectPublicError(h.client.confirmContactVerification({ platformId, customerId, channel: "EMAIL", code: guess }), "INVALID", "INVALID_VERIFICATION_CODE");
    }
    h.clock.advance(CONTACT_LIMITS.resendMs - 1_000);
    const early = await h.client.sendContactVerification({ platformId, customerId, channel: "EMAIL" }).catch((e: unknown) => appErrorFromConnect(ConnectError.from(e)));
    expect(early).toMatchObject({ code: "RATE_LIMITED", details: { retryAfterSeconds: 1 } });
    h.clock.advance(1_000);
    nextCode = "500002";
    await h.client.sendContactVerification({ platformId, customerId, channel: "EMAIL" });
    // Three wrong guesses went to the replaced code: two are left, not five.
    for (const guess of ["600004", "600005"]) {
      await expectPublicError(h.client.confirmContactVerification({ platformId, customerId, channel: "EMAIL", code: guess }), "INVALID", "INVALID_VERIFICATION_CODE");
    }
    await expectPublicError(h.client.confirmContactVerification({ platformId, customerId, channel: "EMAIL", code: "500002" }), "INVALID", "VERIFICATION_ATTEMPTS_EXCEEDED");
  });

  it("accepts the sandbox magic code 123456 on sandbox platforms only, and only after a send", async () => {
    const sandbox = await customerWithEmail("SANDBOX");
    await expectPublicError(h.client.confirmContactVerification({ ...sandbox, channel: "EMAIL", code: "123456" }), "INVALID", "VERIFICATION_CODE_NOT_SENT");
    nextCode = "424242";
    await h.client.sendContactVerification({ platformId: sandbox.platformId, customerId: sandbox.customerId, channel: "EMAIL" });
    expect((await h.client.confirmContactVerification({ platformId: sandbox.platformId, customerId: sandbox.customerId, channel: "EMAIL", code: "123456" })).customer!.contactVerification?.email).toBe("VERIFIED");
    const prod = await customerWithEmail("PRODUCTION");
    await h.client.sendContactVerification({ platformId: prod.platformId, customerId: prod.customerId, channel: "EMAIL" });
    await expectPublicError(h.client.confirmContactVerification({ platformId: prod.platformId, customerId: prod.customerId, channel: "EMAIL", code: "123456" }), "INVALID", "INVALID_VERIFICATION_CODE");
  });

  it("answers 409 CONTACT_VERIFICATION_NOT_REQUIRED without a contact on file (no email; customers carry no phone)", async () => {
    const platformId = h.platform();
    const { customer } = await h.client.createCustomer({ platformId, customer: individual("") });
    expect(customer!.contactVerification).toBeUndefined();
    await expectPublicError(h.client.sendContactVerification({ platformId, customerId: customer!.id, channel: "EMAIL" }), "CONFLICT", "CONTACT_VERIFICATION_NOT_REQUIRED");
    const withEmail = await customerWithEmail();
    await expectPublicError(h.client.sendContactVerification({ ...withEmail, channel: "PHONE" }), "CONFLICT", "CONTACT_VERIFICATION_NOT_REQUIRED");
    await expectPublicError(h.client.sendContactVerification({ platformId, customerId: "Customer:00000000-0000-7000-8000-000000000000", channel: "EMAIL" }), "NOT_FOUND", "USER_NOT_FOUND");
  });
});
