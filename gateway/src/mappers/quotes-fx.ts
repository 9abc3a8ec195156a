import type { Currency, PaymentInstruction, Quote } from "@corridor/proto/corridor/quotes_fx/v1/quote_pb.js";
import type { ExchangeRate, ReceiverLookup } from "@corridor/proto/corridor/quotes_fx/v1/quotes_fx_service_pb.js";
import { isoFromTimestamp, numberFromInt64 } from "./time.js";

export const currencyJson = (c: Currency | undefined) => ({ code: c?.code ?? "", name: c?.name ?? "", symbol: c?.symbol ?? "", decimals: c?.decimals ?? 0 });

/** Rates travel as decimal strings; the public API shows them as JSON numbers (display only, never used for money here). */
const rateJson = (s: string) => Number(s);

export function exchangeRateJson(r: ExchangeRate) {
  const withAmount = r.sendingAmount > 0n;
  return {
    sourceCurrency: currencyJson(r.sourceCurrency),
    destinationCurrency: currencyJson(r.destinationCurrency),
    exchangeRate: rateJson(r.exchangeRate),
    ...(withAmount ? { sendingAmount: numberFromInt64(r.sendingAmount), receivingAmount: numberFromInt64(r.receivingAmount), feesIncluded: numberFromInt64(r.feesIncluded) } : {}),
    updatedAt: isoFromTimestamp(r.updatedAt),
  };
}

export function receiverLookupJson(l: ReceiverLookup | undefined) {
  return {
    lookupId: l?.id ?? "",
    ...(l?.receiverUmaAddress ? { receiverUmaAddress: l.receiverUmaAddress } : {}),
    ...(l?.accountId ? { accountId: l.accountId } : {}),
    supportedCurrencies: (l?.supportedCurrencies ?? []).map((c) => ({
      currency: currencyJson(c.currency),
      estimatedExchangeRate: rateJson(c.estimatedExchangeRate),
      min: numberFromInt64(c.min),
      max: numberFromInt64(c.max),
    })),
    requiredPayerDataFields: (l?.requiredPayerDataFields ?? []).map((f) => ({ name: f.name, mandatory: f.mandatory })),
  };
}

/** The public Quote (spec): paymentInstructions only for REALTIME_FUNDING, payloadToSign only for embedded wallets. */
export function quoteJson(q: Quote | undefined) {
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
    sendingCurrency: currencyJson(q.sendingCurrency),
    receivingCurrency: currencyJson(q.receivingCurrency),
    totalSendingAmount: numberFromInt64(q.totalSendingAmount),
    totalReceivingAmount: numberFromInt64(q.totalReceivingAmount),
    exchangeRate: rateJson(q.exchangeRate),
    feesIncluded: numberFromInt64(q.feesIncluded),
    transactionId: q.transactionId,
    ...(q.paymentInstructions.length ? { paymentInstructions: q.paymentInstructions.map(instructionJson) } : {}),
    ...(Object.keys(q.counterpartyInformation).length ? { counterpartyInformation: { ...q.counterpartyInformation } } : {}),
    rateDetails: {
      counterpartyMultiplier: rateJson(rd?.counterpartyMultiplier ?? "1"),
      counterpartyFixedFee: numberFromInt64(rd?.counterpartyFixedFee ?? 0n),
      serviceApiMultiplier: rateJson(rd?.serviceApiMultiplier ?? "1"),
      serviceApiFixedFee: numberFromInt64(rd?.serviceApiFixedFee ?? 0n),
      serviceApiVariableFeeRate: rateJson(rd?.serviceApiVariableFeeRate ?? "0"),
      serviceApiVariableFeeAmount: numberFromInt64(rd?.serviceApiVariableFeeAmount ?? 0n),
    },
    ...opt("payloadToSign", q.payloadToSign),
    lockedCurrencySide: q.lockedCurrencySide,
    ...opt("lookupId", q.lookupId),
    ...opt("description", q.description),
    ...opt("purposeOfPayment", q.purposeOfPayment),
    ...opt("failureReason", q.failureReason),
  };
}

function instructionJson(i: PaymentInstruction) {
  const info =
    i.accountType === "SPARK_WALLET"
      ? { accountType: "SPARK_WALLET" as const, assetType: i.assetType, address: i.address, ...(i.invoice ? { invoice: i.invoice } : {}) }
      : { accountType: "USD_ACCOUNT" as const, paymentRails: [...i.paymentRails], accountNumber: i.accountNumber, routingNumber: i.routingNumber, bankName: i.bankName, reference: i.reference };
  return { accountOrWalletInfo: info, instructionsNotes: i.instructionsNotes, amount: numberFromInt64(i.amount), currency: i.currency };
}
