import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { amountFromJson, amountToJson, isId, isValidAmount, newId } from "@corridor/kit";
import { transactionToJson } from "@corridor/kit/rest-json";
import { CurrencySchema } from "@corridor/proto/corridor/ledger/v1/accounts_pb.js";
import { RefundSchema, TransactionEndSchema, TransactionSchema } from "@corridor/proto/corridor/ledger/v1/transaction_pb.js";
import { bench, describe } from "vitest";

// Helpers of packages/kit that every request or stored row goes through: ids, money conversions
// at the JSON boundary, and the ledger Transaction → public JSON mapper (GET /transactions, every
// transfer and quote answer, every transaction webhook).

describe("kit ids (ids.ts)", () => {
  const id = newId("Transaction");
  if (!isId("Transaction", id)) throw new Error(`newId made an id isId refuses: ${id}`);
  bench("newId", () => {
    newId("Transaction");
  });
  bench("isId", () => {
    isId("Transaction", id);
  });
});

describe("kit money (money.ts)", () => {
  if (amountFromJson(1_234_567) !== 1_234_567n || amountFromJson(1.5) !== null) throw new Error("amountFromJson changed meaning");
  bench("amountFromJson (safe integer)", () => {
    amountFromJson(1_234_567);
  });
  bench("amountToJson", () => {
    amountToJson(1_234_567n);
  });
  bench("isValidAmount", () => {
    isValidAmount(1_234_567n, { min: 1n });
  });
});

describe("kit transactionToJson (rest-json/transactions.ts)", () => {
  const usd = create(CurrencySchema, { code: "USD", name: "US Dollar", symbol: "$", decimals: 2 });
  const eur = create(CurrencySchema, { code: "EUR", name: "Euro", symbol: "€", decimals: 2 });
  const at = timestampFromDate(new Date("2025-10-13T12:00:00.000Z"));
  const transfer = create(TransactionSchema, {
    id: newId("Transaction"),
    platformId: newId("Platform"),
    status: "PENDING",
    type: "OUTGOING",
    source: create(TransactionEndSchema, { type: "ACCOUNT", accountId: newId("InternalAccount"), currency: "USD" }),
    destination: create(TransactionEndSchema, { type: "ACCOUNT", accountId: newId("ExternalAccount"), currency: "USD" }),
    customerId: newId("Customer"),
    platformCustomerId: "customer-42",
    amount: 2_500n,
    currency: usd,
    sentAmount: 2_500n,
    sentCurrency: usd,
    exchangeRate: "1",
    createdAt: at,
    updatedAt: at,
    reference: "CRDR-7Q2K-9XWM",
  });
  // A quote's transaction carries the most: rate details, counterparty data and a refund.
  const quoted = create(TransactionSchema, {
    ...transfer,
    id: newId("Transaction"),
    status: "FAILED",
    destination: create(TransactionEndSchema, { type: "ACCOUNT", accountId: newId("ExternalAccount"), currency: "EUR", paymentRail: "SEPA" }),
    amount: 9_196n,
    currency: eur,
    sentAmount: 10_000n,
    exchangeRate: "1.08216",
    fees: 48n,
    quoteId: newId("Quote"),
    settledAt: at,
    failureReason: "OFFRAMP_FAILED",
    failureDetail: "BANK_REJECTED",
    rateDetails: { counterpartyMultiplier: 1, counterpartyFixedFee: 25, serviceApiMultiplier: 1.002, serviceApiFixedFee: 10, serviceApiVariableFeeRate: 0.001, serviceApiVariableFeeAmount: 10 },
    counterpartyInformation: { FULL_NAME: "Ada Lovelace", COUNTRY_OF_RESIDENCE: "DE" },
    refund: create(RefundSchema, { reference: "CRDR-REFUND-1", initiatedAt: at, settledAt: at, status: "COMPLETED", reason: "BANK_REJECTED" }),
  });
  const checked = transactionToJson(quoted);
  if (checked.receivedAmount.amount !== 9_196 || checked.sentAmount?.amount !== 10_000 || !checked.refund) throw new Error("transactionToJson changed shape");

  bench("transfer (OUTGOING, same currency)", () => {
    transactionToJson(transfer);
  });
  bench("quote transaction (rate details, counterparty, refund)", () => {
    transactionToJson(quoted);
  });
  bench("quote transaction + JSON.stringify (what goes on the wire)", () => {
    JSON.stringify(transactionToJson(quoted));
  });
});
