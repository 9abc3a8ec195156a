import { create } from "@bufbuild/protobuf";
import { AddressSchema, CustomerInputSchema } from "@corridor/proto/corridor/customers_kyc/v1/customer_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectPublicError, startHarness, type Harness } from "./harness.js";

// Issue 14, defect 4: DELETE /customers/{id} asks the ledger first; a customer holding money (a
// balance, a hold, a transaction in flight) is 409 CUSTOMER_HAS_FUNDS with the amounts, and nothing
// changes.

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => h?.close());

let n = 0;
const individual = () =>
  create(CustomerInputSchema, {
    customerType: "INDIVIDUAL",
    platformCustomerId: `del-${++n}`,
    fullName: "Alice Smith",
    birthDate: "1990-04-01",
    nationality: "US",
    address: create(AddressSchema, { line1: "1 Main St", postalCode: "94105", country: "US" }),
  });

describe("deleting a customer", () => {
  it("refuses a customer holding 10,000 with a 3,000 payout in flight: 409 CUSTOMER_HAS_FUNDS with the amounts per account, and the customer stays", async () => {
    const platformId = h.platform();
    const { customer } = await h.client.createCustomer({ platformId, customer: individual() });
    const id = customer!.id;
    h.ledger.holdings.set(id, {
      accounts: [{ accountId: "InternalAccount:usd", type: "INTERNAL_FIAT", currency: "USD", balance: 10_000n, held: 3_000n }],
      inFlightTransactions: [{ transactionId: "Transaction:payout", type: "OUTGOING", status: "PENDING", amount: 3_000n, currency: "USD", refundStatus: "" }],
    });
    const before = (await h.events()).length;

    const err = await expectPublicError(h.client.deleteCustomer({ platformId, customerId: id }), "CONFLICT", "CUSTOMER_HAS_FUNDS");
    // Amounts in the message are major units with the currency (issue 27); details keep minor units.
    expect(err.message).toContain("100.00 USD in InternalAccount:usd (30.00 USD held)");
    expect(err.details).toEqual({
      customerId: id,
      accounts: [{ accountId: "InternalAccount:usd", type: "INTERNAL_FIAT", currency: "USD", balance: 10_000, held: 3_000, available: 7_000 }],
      inFlightTransactions: [{ id: "Transaction:payout", type: "OUTGOING", status: "PENDING", amount: 3_000, currency: "USD" }],
    });
    expect((await h.client.getCustomer({ platformId, customerId: id })).customer!.isDeleted).toBe(false);
    expect((await h.events()).length).toBe(before);
  });

  it("deletes a customer that holds nothing once the ledger has closed it", async () => {
    const platformId = h.platform();
    const { customer } = await h.client.createCustomer({ platformId, customer: individual() });
    const res = await h.client.deleteCustomer({ platformId, customerId: customer!.id });
    expect(res.customer!.isDeleted).toBe(true);
    expect(h.ledger.closed.has(customer!.id)).toBe(true);
  });

  it("deletes nothing when the ledger cannot be asked", async () => {
    const platformId = h.platform();
    const { customer } = await h.client.createCustomer({ platformId, customer: individual() });
    h.ledger.unavailable = true;
    try {
      await expect(h.client.deleteCustomer({ platformId, customerId: customer!.id })).rejects.toThrow();
    } finally {
      h.ledger.unavailable = false;
    }
    expect((await h.client.getCustomer({ platformId, customerId: customer!.id })).customer!.isDeleted).toBe(false);
  });

  it("answers 404 for an unknown customer and 410 for a deleted one without asking the ledger", async () => {
    const platformId = h.platform();
    await expectPublicError(h.client.deleteCustomer({ platformId, customerId: "Customer:missing" }), "NOT_FOUND", "USER_NOT_FOUND");
    const { customer } = await h.client.createCustomer({ platformId, customer: individual() });
    await h.client.deleteCustomer({ platformId, customerId: customer!.id });
    h.ledger.unavailable = true;
    try {
      await expectPublicError(h.client.deleteCustomer({ platformId, customerId: customer!.id }), "GONE", "CUSTOMER_DELETED");
    } finally {
      h.ledger.unavailable = false;
    }
  });
});
