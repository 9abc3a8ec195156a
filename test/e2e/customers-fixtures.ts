import { expect } from "vitest";
import type { ApiResponse, Caller } from "./harness.js";

/** Shared by the customers-* end-to-end suites: request bodies and assertions. */

/** The field names of a 400 INVALID_INPUT answer. */
export const fieldsOf = (res: ApiResponse): string[] => (res.body?.details?.errors ?? []).map((e: { field: string }) => e.field);

export function expectInvalid(res: ApiResponse, ...fields: string[]) {
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body.code).toBe("INVALID_INPUT");
  for (const f of fields) expect(fieldsOf(res)).toContain(f);
}

let seq = 0;
export const uniq = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${++seq}`;

export const address = { line1: "1 Main St", postalCode: "94105", country: "US", city: "San Francisco" };

export const individual = (extra: Record<string, unknown> = {}) => ({
  customerType: "INDIVIDUAL",
  platformCustomerId: uniq("ind"),
  fullName: "Alice Smith",
  birthDate: "1990-04-01",
  nationality: "US",
  address,
  region: "US",
  email: "alice@example.com",
  ...extra,
});

export const business = (extra: Record<string, unknown> = {}) => ({
  customerType: "BUSINESS",
  platformCustomerId: uniq("biz"),
  businessInfo: { legalName: "Acme Inc", registrationNumber: "REG-123", taxId: "12-3456789" },
  address,
  region: "US",
  ...extra,
});


/** Creates an individual customer and, unless it starts APPROVED, verifies it (sandbox: APPROVED). */
export async function verifiedCustomer(p: Caller, extra: Record<string, unknown> = {}) {
  const created = await p.call("POST", "/customers", individual(extra));
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  if (created.body.kycStatus !== "APPROVED") {
    const v = await p.call("POST", "/verifications", { customerId: created.body.id });
    expect(v.status, JSON.stringify(v.body)).toBeLessThan(300);
  }
  return created.body;
}
