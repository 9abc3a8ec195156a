import type { Currency } from "@corridor/proto/corridor/ledger/v1/accounts_pb.js";
import type { Transaction } from "@corridor/proto/corridor/ledger/v1/transaction_pb.js";
import { emptyToUndefined, isoFromTimestamp, numberFromInt64, optionalIso } from "./time.js";

// The public JSON of a ledger Transaction, shared by the gateway (GET /transactions/{id}) and the
// services that put a Transaction into a webhook's `data` (decisions §8: data is the resource as
// its GET returns it). Pure: proto in, plain JSON out.

function currencyToJson(c: Currency | undefined) {
  if (!c) throw new Error("service answered without a currency");
  return { code: c.code, name: c.name, symbol: c.symbol, decimals: c.decimals };
}


/**
 * Ledger proto -> the public Transaction (spec + decisions §5). OUTGOING adds sentAmount,
 * exchangeRate, fees, and for quote transactions quoteId, counterpartyInformation and refund.
 * rateDetails as the ledger answers them: a quote's as fixed, every other transaction's
 * same-currency and fee-free (multiplier 1, fees 0; the ledger also answers sentAmount = amount,
 * rate "1", fees 0 for transfers); none for a lookup's CREATED transaction.
 */
export function transactionToJson(t: Transaction | undefined) {
  if (!t) throw new Error("service answered without a transaction");
  const amount = { amount: numberFromInt64(t.amount), currency: currencyToJson(t.currency) };
  const sent = { amount: numberFromInt64(t.sentAmount), currency: currencyToJson(t.sentCurrency ?? t.currency) };
  const opt = (key: string, v: string) => (v ? { [key]: v } : {});
  const refund = t.refund
    ? {
        refund: {
          reference: t.refund.reference,
          ...(t.refund.initiatedAt ? { initiatedAt: optionalIso(t.refund.initiatedAt) } : {}),
          ...(t.refund.settledAt ? { settledAt: optionalIso(t.refund.settledAt) } : {}),
          status: t.refund.status,
          ...opt("reason", t.refund.reason),
        },
      }
    : {};
  const counterparty = Object.keys(t.counterpartyInformation).length ? { counterpartyInformation: { ...t.counterpartyInformation } } : {};
  return {
    id: t.id,
    status: t.status,
    type: t.type,
    // Older stored events (before the ledger set direction) fall back to what their type implied then.
    direction: t.direction || (t.type === "INCOMING" ? "CREDIT" : "DEBIT"),
    source: {
      sourceType: t.source?.type ?? "ACCOUNT",
      ...opt("accountId", t.source?.accountId ?? ""),
      ...opt("umaAddress", t.source?.umaAddress ?? ""),
      currency: t.source?.currency ?? "",
    },
    destination: {
      destinationType: t.destination?.type ?? "ACCOUNT",
      ...opt("accountId", t.destination?.accountId ?? ""),
      ...opt("umaAddress", t.destination?.umaAddress ?? ""),
      ...opt("paymentRail", t.destination?.paymentRail ?? ""),
      currency: t.destination?.currency ?? "",
    },
    ...opt("customerId", t.customerId),
    ...opt("platformCustomerId", t.platformCustomerId),
    receivedAmount: amount,
    ...(t.type === "OUTGOING" ? { sentAmount: sent, exchangeRate: Number(t.exchangeRate || "1"), fees: numberFromInt64(t.fees) } : {}),
    ...opt("quoteId", t.quoteId),
    ...(t.settledAt ? { settledAt: optionalIso(t.settledAt) } : {}),
    createdAt: isoFromTimestamp(t.createdAt),
    updatedAt: isoFromTimestamp(t.updatedAt),
    ...(t.receiptDeliveryConfirmedAt ? { receiptDeliveryConfirmedAt: optionalIso(t.receiptDeliveryConfirmedAt) } : {}),
    ...opt("agentId", t.agentId),
    ...opt("description", t.description),
    ...(t.status !== "CREATED" && t.reference ? { reconciliationInstructions: { reference: t.reference } } : {}),
    ...opt("failureReason", t.failureReason),
    ...(emptyToUndefined(t.failureDetail) ? { failureDetail: t.failureDetail } : {}),
    ...(t.rateDetails ? { rateDetails: serviceRateDetails(t.rateDetails) } : {}),
    ...counterparty,
    ...(Object.keys(t.receiverCustomerInfo).length ? { receiverCustomerInfo: { ...t.receiverCustomerInfo } } : {}),
    ...refund,
  };
}

/** The rate-detail fields a Transaction shows: the service's four (the Quote adds the counterparty's). */
const SERVICE_RATE_FIELDS = ["serviceApiMultiplier", "serviceApiFixedFee", "serviceApiVariableFeeRate", "serviceApiVariableFeeAmount"] as const;

/**
 * The ledger keeps the quote's rate details as quotes-fx recorded them (decimal strings, all six
 * fields); the public Transaction carries only the service's four, as JSON numbers like the
 * Quote's. They are shown, never computed with, so a number is exact enough here.
 */
function serviceRateDetails(rd: Record<string, unknown>): Partial<Record<(typeof SERVICE_RATE_FIELDS)[number], number>> {
  const out: Partial<Record<(typeof SERVICE_RATE_FIELDS)[number], number>> = {};
  for (const field of SERVICE_RATE_FIELDS) {
    const v = rd[field];
    if (typeof v === "number") out[field] = v;
    else if (typeof v === "string" && v.trim() !== "" && Number.isFinite(Number(v))) out[field] = Number(v);
  }
  return out;
}
