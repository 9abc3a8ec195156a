import type { CreateQuoteRequest } from "@corridor/proto/corridor/quotes_fx/v1/quotes_fx_service_pb.js";

/**
 * The fields of a quote request (POST /quotes, POST /agents/me/quotes) as plain values: quotes-fx
 * prices and stores it, agents checks it against an agent's policy before asking quotes-fx.
 */
export interface QuoteRequestFields {
  source: { sourceType: string; accountId: string; customerId: string; currency: string };
  destination: { destinationType: string; accountId: string; paymentRail: string; umaAddress: string; currency: string };
  lockedCurrencySide: string;
  lockedCurrencyAmount: bigint;
  lookupId: string;
  immediatelyExecute: boolean;
  description: string;
  purposeOfPayment: string;
  senderCustomerInfo: Record<string, string>;
  counterpartyInformation: Record<string, string>;
}

/** The quote request's fields from corridor.quotes_fx.v1.CreateQuoteRequest (absent parts as ""). */
export function quoteRequestFields(q: CreateQuoteRequest): QuoteRequestFields {
  return {
    source: { sourceType: q.source?.sourceType ?? "", accountId: q.source?.accountId ?? "", customerId: q.source?.customerId ?? "", currency: q.source?.currency ?? "" },
    destination: {
      destinationType: q.destination?.destinationType ?? "",
      accountId: q.destination?.accountId ?? "",
      paymentRail: q.destination?.paymentRail ?? "",
      umaAddress: q.destination?.umaAddress ?? "",
      currency: q.destination?.currency ?? "",
    },
    lockedCurrencySide: q.lockedCurrencySide,
    lockedCurrencyAmount: q.lockedCurrencyAmount,
    lookupId: q.lookupId,
    immediatelyExecute: q.immediatelyExecute,
    description: q.description,
    purposeOfPayment: q.purposeOfPayment,
    senderCustomerInfo: { ...q.senderCustomerInfo },
    counterpartyInformation: { ...q.counterpartyInformation },
  };
}
