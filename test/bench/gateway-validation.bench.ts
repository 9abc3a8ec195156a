import { bench, describe } from "vitest";
import { SHARED_SCHEMAS } from "../../gateway/src/app.js";
import { CreateCustomerBody, ListCustomersQuery } from "../../gateway/src/schemas/customers.js";
import { CreateQuoteBody } from "../../gateway/src/schemas/quotes-fx.js";
import { TransferBody } from "../../gateway/src/schemas/transfers.js";
import { installValidators } from "../../gateway/src/validation.js";

// The gateway's request validation without a server: installValidators only needs something that
// takes shared schemas and a validator compiler, so it is handed a recorder instead of Fastify and
// the compiler it installs is called the way Fastify calls it at route registration. What is timed
// is then exactly the per-request check (Ajv code compiled with the gateway's options), nothing of
// routing or HTTP parsing.

type Compiler = (route: { schema: unknown; httpPart?: string; method?: string; url?: string }) => (data: unknown) => boolean;
let compiler: Compiler | undefined;
const recorder = {
  addSchema() {},
  setValidatorCompiler(fn: Compiler) {
    compiler = fn;
  },
};
// The named schemas the gateway registers, so $refs resolve as they do there.
installValidators(recorder as unknown as Parameters<typeof installValidators>[0], SHARED_SCHEMAS);
if (!compiler) throw new Error("installValidators installed no validator compiler");
const compile = compiler;

const quoteBody = compile({ schema: CreateQuoteBody, httpPart: "body", method: "POST", url: "/quotes" });
const transferBody = compile({ schema: TransferBody, httpPart: "body", method: "POST", url: "/transfer-out" });
const customerBody = compile({ schema: CreateCustomerBody, httpPart: "body", method: "POST", url: "/customers" });
const customersQuery = compile({ schema: ListCustomersQuery, httpPart: "querystring", method: "GET", url: "/customers" });

// Fresh objects per call, as Fastify parses one per request: the validators coerce and fill
// defaults in place, so reusing one object would time a cheaper, already-normalised input.
const quote = () => ({
  source: { sourceType: "ACCOUNT", accountId: "InternalAccount:0199d6a1-3c2e-7b4f-8a10-5f0e2d9c1a77" },
  destination: { destinationType: "ACCOUNT", accountId: "ExternalAccount:0199d6a1-3c2e-7b4f-8a10-5f0e2d9c1a78" },
  lockedCurrencySide: "SENDING",
  lockedCurrencyAmount: 10_000,
  description: "invoice 42",
});
const badQuote = () => ({
  source: { sourceType: "CARD", accountId: "" },
  destination: { destinationType: "ACCOUNT", accountId: "ExternalAccount:x", extra: true },
  lockedCurrencySide: "BOTH",
  lockedCurrencyAmount: -5,
});
const transfer = () => ({
  source: { accountId: "InternalAccount:0199d6a1-3c2e-7b4f-8a10-5f0e2d9c1a77" },
  destination: { accountId: "ExternalAccount:0199d6a1-3c2e-7b4f-8a10-5f0e2d9c1a78" },
  amount: 2_500,
});
const customer = () => ({
  customerType: "INDIVIDUAL",
  platformCustomerId: "customer-42",
  fullName: "Alice Smith",
  birthDate: "1990-04-01",
  nationality: "US",
  address: { line1: "1 Main St", postalCode: "94105", country: "US", city: "San Francisco" },
  region: "US",
  email: "alice@example.com",
  currencies: ["USD", "USDC"],
});
const query = () => ({ limit: "20", customerType: "INDIVIDUAL", createdAfter: "2025-01-01T00:00:00Z" });

function expectValid(ok: boolean, what: string): void {
  if (!ok) throw new Error(`${what} should be valid`);
}
expectValid(quoteBody(quote()), "the quote body");
expectValid(!quoteBody(badQuote()), "refusing the bad quote body");
// allErrors: every bad field is reported (sourceType, accountId, the extra property, lockedCurrencySide, lockedCurrencyAmount).
expectValid((quoteBody as unknown as { errors?: unknown[] }).errors?.length === 5, "reporting the bad quote body's 5 errors");
expectValid(transferBody(transfer()), "the transfer body");
expectValid(customerBody(customer()), "the customer body");
const q = query();
expectValid(customersQuery(q) && (q as { limit: unknown }).limit === 20, "the customers query (coerced)");

describe("gateway request validation (gateway/src/validation.ts)", () => {
  bench("POST /quotes body, valid", () => {
    quoteBody(quote());
  });
  bench("POST /quotes body, 5 errors reported (allErrors)", () => {
    quoteBody(badQuote());
  });
  bench("POST /transfer-out body, valid", () => {
    transferBody(transfer());
  });
  bench("POST /customers body, valid (formats, $ref Address)", () => {
    customerBody(customer());
  });
  bench("GET /customers query, coerced (limit=20)", () => {
    customersQuery(query());
  });
});
