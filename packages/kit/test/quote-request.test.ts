import { create } from "@bufbuild/protobuf";
import { CreateQuoteRequestSchema } from "@corridor/proto/corridor/quotes_fx/v1/quotes_fx_service_pb.js";
import { describe, expect, it } from "vitest";
import { quoteRequestFields } from "../src/quote-request.js";

describe("quoteRequestFields", () => {
  it("maps a CreateQuoteRequest to plain fields, absent source and destination as empty strings", () => {
    const q = create(CreateQuoteRequestSchema, {
      source: { sourceType: "ACCOUNT", accountId: "InternalAccount:a", currency: "USD" },
      lockedCurrencySide: "SENDING",
      lockedCurrencyAmount: 1000n,
      senderCustomerInfo: { FULL_NAME: "Ada" },
    });
    const fields = quoteRequestFields(q);
    expect(fields).toMatchObject({
      source: { sourceType: "ACCOUNT", accountId: "InternalAccount:a", customerId: "", currency: "USD" },
      destination: { destinationType: "", accountId: "", paymentRail: "", umaAddress: "", currency: "" },
      lockedCurrencySide: "SENDING",
      lockedCurrencyAmount: 1000n,
      senderCustomerInfo: { FULL_NAME: "Ada" },
      counterpartyInformation: {},
    });
    fields.senderCustomerInfo.FULL_NAME = "changed";
    expect(q.senderCustomerInfo.FULL_NAME).toBe("Ada"); // a copy, not the message's map
  });
});
