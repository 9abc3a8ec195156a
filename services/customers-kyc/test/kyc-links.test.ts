import { create } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { AddressSchema, CustomerInputSchema } from "@corridor/proto/corridor/customers_kyc/v1/customer_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectPublicError, startHarness, type Harness } from "./harness.js";

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ env: { CORRIDOR_KYC_LINK_TTL_SECONDS: "3600" } });
});
afterAll(async () => {
  await h?.close();
});

let n = 0;
const individual = (fullName = "Alice Smith") =>
  create(CustomerInputSchema, {
    customerType: "INDIVIDUAL",
    platformCustomerId: `kyc-${++n}`,
    fullName,
    birthDate: "1990-04-01",
    nationality: "US",
    address: create(AddressSchema, { line1: "1 Main St", postalCode: "94105", country: "US" }),
  });

describe("hosted KYC links", () => {
  it("expire after CORRIDOR_KYC_LINK_TTL_SECONDS: 410 KYC_LINK_EXPIRED, and the customer keeps its status", async () => {
    const platformId = h.platform();
    const { customer } = await h.client.createCustomer({ platformId, customer: individual() });
    const link = await h.client.createKycLink({ platformId, customerId: customer!.id, redirectUrl: "" });
    expect(timestampDate(link.expiresAt!).getTime() - h.clock.now().getTime()).toBe(3_600_000);
    h.clock.advance(3_599_999);
    expect((await h.client.getKycLinkPage({ token: link.token })).page!.verificationStatus).toBe("UNVERIFIED");
    h.clock.advance(1);
    await expectPublicError(h.client.getKycLinkPage({ token: link.token }), "GONE", "KYC_LINK_EXPIRED");
    await expectPublicError(h.client.completeKycLink({ token: link.token }), "GONE", "KYC_LINK_EXPIRED");
    expect((await h.client.getCustomer({ platformId, customerId: customer!.id })).customer!.verificationStatus).toBe("UNVERIFIED");
  });

  it("expire on a sandbox platform's sandbox clock: expiresAt is the TTL after the sandbox time, and advancing it past expiresAt answers 410 with the service clock unmoved", async () => {
    const platformId = h.platform({ environment: "SANDBOX" });
    const { customer } = await h.client.createCustomer({ platformId, customer: individual() });
    h.sandboxOffsets.set(platformId, 86_400_000);
    const link = await h.client.createKycLink({ platformId, customerId: customer!.id, redirectUrl: "" });
    expect(timestampDate(link.expiresAt!).getTime()).toBe(h.clock.now().getTime() + 86_400_000 + 3_600_000);
    h.sandboxOffsets.set(platformId, 86_400_000 + 3_599_999);
    expect((await h.client.getKycLinkPage({ token: link.token })).page!.verificationStatus).toBe("UNVERIFIED");
    h.sandboxOffsets.set(platformId, 86_400_000 + 3_600_000);
    await expectPublicError(h.client.getKycLinkPage({ token: link.token }), "GONE", "KYC_LINK_EXPIRED");
    await expectPublicError(h.client.completeKycLink({ token: link.token }), "GONE", "KYC_LINK_EXPIRED");
  });

  it("stores only the token's hash: a token differing in one character is unknown", async () => {
    const platformId = h.platform();
    const { customer } = await h.client.createCustomer({ platformId, customer: individual() });
    const { token } = await h.client.createKycLink({ platformId, customerId: customer!.id, redirectUrl: "" });
    const other = `${token.slice(0, -1)}${token.endsWith("A") ? "B" : "A"}`;
    await expectPublicError(h.client.getKycLinkPage({ token: other }), "NOT_FOUND", "KYC_LINK_NOT_FOUND");
    const done = await h.client.completeKycLink({ token });
    expect([done.verification!.verificationStatus, done.page!.verificationStatus]).toEqual(["APPROVED", "APPROVED"]);
    await expectPublicError(h.client.completeKycLink({ token }), "GONE", "KYC_LINK_USED");
  });
});
