import { principalOf } from "../auth.js";
import { exchangeRateJson } from "../mappers/quotes-fx.js";
import { errorResponses } from "../schemas/common.js";
import { ExchangeRateListSchema, ExchangeRatesQuery } from "../schemas/quotes-fx.js";
import type { Api, RouteDeps } from "./types.js";

export function exchangeRateRoutes(app: Api, { clients }: RouteDeps): void {
  app.get(
    "/exchange-rates",
    {
      schema: {
        summary: "Estimated exchange rates",
        description:
          "Rates from sourceCurrency to each destinationCurrency (repeatable; all known currencies when absent), as sending major units per receiving major unit with the service markups included. Each item prices sendingAmount (default 10000 minor units): receivingAmount and fees {fixed, total} per the quote formula, the platform's minSendingAmount/maxSendingAmount for the source currency and the destination's payout rail. Rates are cached about 5 minutes; a quote locks one. Needs VIEW.",
        tags: ["Quotes"],
        querystring: ExchangeRatesQuery,
        response: { 200: ExchangeRateListSchema, ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const q = request.query;
      const res = await clients.quotesFx.listExchangeRates({
        platformId,
        sourceCurrency: q.sourceCurrency,
        destinationCurrencies: q.destinationCurrency ?? [],
        sendingAmount: q.sendingAmount === undefined ? 0n : BigInt(q.sendingAmount),
      });
      return { data: res.rates.map(exchangeRateJson) };
    },
  );
}
