// Public JSON of a resource, shared by the gateway (its GET answers) and notifications (a
// webhook's data is the resource as its GET returns it, decisions §8). Pure: proto in, JSON out.
import type { Currency, PaymentInstruction, Quote } from "@corridor/proto/corridor/quotes_fx/v1/quote_pb.js";
import { isoFromTimestamp, numberFromInt64 } from "./time.js";

/** A quotes-fx Currency -> the public Currency object. */
export const quoteCurrencyToJson = (c: Currency | undefined) => ({ code: c?.code ?? "", name: c?.name ?? "", symbol: c?.symbol ?? "", decimals: c?.decimals ?? 0 });

/** Rates travel as decimal strings; the public API shows them as JSON numbers (display only, never used for money). */
export const rateToJson = (s: string) => Number(s);

/** The public Quote (spec): paymentInstructions only for REALTIME_FUNDING, payloadToSign only for embedded wallets. */
export function quoteToJson(q: Quote | undefined) {
  if (!q) throw new Error("service answered without a quote");
  const opt = (key: string, v: string) => (v ? { [key]: v } : {});
  const rd = q.rateDetails;
  return {
    id: q.id,
    status: q.status,
    createdAt: isoFromTimestamp(q.createdAt),
    expiresAt: isoFromTimestamp(q.expiresAt),
    source: {
      sourceType: q.source?.sourceType ?? "",
      ...opt("accountId", q.source?.accountId ?? ""),
      ...opt("customerId", q.source?.customerId ?? ""),
      ...(q.source?.sourceType === "REALTIME_FUNDING" ? opt("currency", q.source.currency) : {}),
    },
    destination: {
      destinationType: q.destination?.destinationType ?? "",
      ...opt("accountId", q.destination?.accountId ?? ""),
      ...opt("paymentRail", q.destination?.paymentRail ?? ""),
      ...opt("umaAddress", q.destination?.umaAddress ?? ""),
      ...opt("currency", q.destination?.currency ?? ""),
    },
    sendingCurrency: quoteCurrencyToJson(q.sendingCurrency),
    receivingCurrency: quoteCurrencyToJson(q.receivingCurrency),
    totalSendingAmount: numberFromInt64(q.totalSendingAmount),
    totalReceivingAmount: numberFromInt64(q.totalReceivingAmount),
    exchangeRate: rateToJson(q.exchangeRate),
    feesIncluded: numberFromInt64(q.feesIncluded),
    transactionId: q.transactionId,
    ...(q.paymentInstructions.length ? { paymentInstructions: q.paymentInstructions.map(instructionToJson) } : {}),
    ...(Object.keys(q.counterpartyInformation).length ? { counterpartyInformation: { ...q.counterpartyInformation } } : {}),
    rateDetails: {
      counterpartyMultiplier: rateToJson(rd?.counterpartyMultiplier ?? "1"),
      counterpartyFixedFee: numberFromInt64(rd?.counterpartyFixedFee ?? 0n),
      serviceApiMultiplier: rateToJson(rd?.serviceApiMultiplier ?? "1"),
      serviceApiFixedFee: numberFromInt64(rd?.serviceApiFixedFee ?? 0n),
      serviceApiVariableFeeRate: rateToJson(rd?.serviceApiVariableFeeRate ?? "0"),
      serviceApiVariableFeeAmount: numberFromInt64(rd?.serviceApiVariableFeeAmount ?? 0n),
    },
    ...opt("payloadToSign", q.payloadToSign),
    lockedCurrencySide: q.lockedCurrencySide,
    ...opt("lookupId", q.lookupId),
    ...opt("description", q.description),
    ...opt("purposeOfPayment", q.purposeOfPayment),
    ...opt("failureReason", q.failureReason),
    // PENDING_AUTHORIZATION quotes: the strong-customer-authentication challenge (Grid's ScaChallenge).
    ...(q.scaChallenge
      ? {
          scaChallenge: {
            id: q.scaChallenge.id,
            expiresAt: isoFromTimestamp(q.scaChallenge.expiresAt),
            factor: q.scaChallenge.factor,
            availableFactors: [...q.scaChallenge.availableFactors],
            ...opt("purpose", q.scaChallenge.purpose),
          },
        }
      : {}),
  };
}

/** The same mapper under the gateway's historical name. */
export const quoteJson = quoteToJson;

function instructionToJson(i: PaymentInstruction) {
  const info =
    i.accountType === "SPARK_WALLET"
      ? { accountType: "SPARK_WALLET" as const, assetType: i.assetType, address: i.address, ...(i.invoice ? { invoice: i.invoice } : {}) }
      : { accountType: "USD_ACCOUNT" as const, paymentRails: [...i.paymentRails], accountNumber: i.accountNumber, routingNumber: i.routingNumber, bankName: i.bankName, reference: i.reference };
  return { accountOrWalletInfo: info, instructionsNotes: i.instructionsNotes, amount: numberFromInt64(i.amount), currency: i.currency };
}
