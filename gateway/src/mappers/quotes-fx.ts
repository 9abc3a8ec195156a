import type { ExchangeRate, ReceiverLookup } from "@corridor/proto/corridor/quotes_fx/v1/quotes_fx_service_pb.js";
import { quoteCurrencyToJson as currencyJson, rateToJson as rateJson } from "@corridor/kit/rest-json";
import { isoFromTimestamp, numberFromInt64 } from "@corridor/kit/rest-json";

// The Quote mapper lives in @corridor/kit/rest-json: webhooks (an AgentAction's quote) carry the
// same Quote JSON as GET /quotes/{id}.
export { quoteJson, quoteToJson } from "@corridor/kit/rest-json";

export function exchangeRateJson(r: ExchangeRate) {
  return {
    sourceCurrency: currencyJson(r.sourceCurrency),
    sendingAmount: numberFromInt64(r.sendingAmount),
    minSendingAmount: numberFromInt64(r.minSendingAmount),
    maxSendingAmount: numberFromInt64(r.maxSendingAmount),
    destinationCurrency: currencyJson(r.destinationCurrency),
    destinationPaymentRail: r.destinationPaymentRail,
    receivingAmount: numberFromInt64(r.receivingAmount),
    exchangeRate: rateJson(r.exchangeRate),
    fees: { fixed: numberFromInt64(r.fixedFees), total: numberFromInt64(r.feesIncluded) },
    feesIncluded: numberFromInt64(r.feesIncluded),
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
