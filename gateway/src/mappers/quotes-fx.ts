import type { ExchangeRate, ReceiverLookup } from "@corridor/proto/corridor/quotes_fx/v1/quotes_fx_service_pb.js";
import { quoteCurrencyToJson as currencyJson, rateToJson as rateJson } from "@corridor/kit/rest-json";
import { isoFromTimestamp, numberFromInt64 } from "@corridor/kit/rest-json";

// The Quote mapper lives in @corridor/kit/rest-json: webhooks (an AgentAction's quote) carry the
// same Quote JSON as GET /quotes/{id}.
export { quoteJson, quoteToJson } from "@corridor/kit/rest-json";

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
