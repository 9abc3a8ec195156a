import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { CurrencySchema, QuoteSchema, type Currency as CurrencyMsg, type Quote as QuoteMsg } from "@corridor/proto/corridor/quotes_fx/v1/quote_pb.js";
import { ReceiverLookupSchema, type ReceiverLookup as ReceiverLookupMsg } from "@corridor/proto/corridor/quotes_fx/v1/quotes_fx_service_pb.js";
import { findCurrency, type Currency } from "../domain/currencies.js";
import type { Quote, ReceiverLookup } from "../domain/ports.js";

export const currencyMsg = (c: Currency): CurrencyMsg => create(CurrencySchema, { code: c.code, name: c.name, symbol: c.symbol, decimals: c.decimals });

export function lookupMsg(l: ReceiverLookup): ReceiverLookupMsg {
  return create(ReceiverLookupSchema, {
    id: l.id,
    receiverUmaAddress: l.receiverUmaAddress,
    accountId: l.accountId,
    supportedCurrencies: l.supportedCurrencies.map((o) => ({
      currency: currencyMsg(findCurrency(o.currencyCode) ?? { code: o.currencyCode, name: o.currencyCode, symbol: o.currencyCode, decimals: 2 }),
      estimatedExchangeRate: o.estimatedExchangeRate,
      min: o.min,
      max: o.max,
    })),
    requiredPayerDataFields: l.requiredPayerDataFields,
    expiresAt: timestampFromDate(l.expiresAt),
  });
}

export function quoteMsg(q: Quote): QuoteMsg {
  const cur = (code: string) => currencyMsg(findCurrency(code) ?? { code, name: code, symbol: code, decimals: 2 });
  return create(QuoteSchema, {
    id: q.id,
    platformId: q.platformId,
    status: q.status,
    createdAt: timestampFromDate(q.createdAt),
    expiresAt: timestampFromDate(q.expiresAt),
    source: q.source,
    destination: q.destination,
    sendingCurrency: cur(q.sendingCurrency),
    receivingCurrency: cur(q.receivingCurrency),
    totalSendingAmount: q.totalSendingAmount,
    totalReceivingAmount: q.totalReceivingAmount,
    exchangeRate: q.exchangeRate,
    feesIncluded: q.feesIncluded,
    transactionId: q.transactionId,
    counterpartyInformation: q.counterpartyInformation,
    rateDetails: q.rateDetails,
    payloadToSign: q.payloadToSign,
    lockedCurrencySide: q.lockedCurrencySide,
    lookupId: q.lookupId,
    description: q.description,
    purposeOfPayment: q.purposeOfPayment,
    paymentInstructions: q.paymentInstructions,
    signatureRequestId: q.signatureRequestId,
    failureReason: q.failureReason,
    agentId: q.agentId,
    scaChallenge: q.scaChallenge ? { ...q.scaChallenge, expiresAt: timestampFromDate(q.scaChallenge.expiresAt) } : undefined,
  });
}
