import { principalOf } from "../auth.js";
import { quoteCurrencyToJson as currencyJson } from "@corridor/kit/rest-json";
import { receiverLookupJson } from "../mappers/quotes-fx.js";
import { listEnvelope, pageOf } from "./list.js";
import { errorResponses } from "../schemas/common.js";
import { AccountReceiverParams, ListUmaProvidersQuery, ReceiverLookupSchema, ReceiverQuery, UmaProviderListSchema, UmaReceiverParams } from "../schemas/quotes-fx.js";
import type { Api, RouteDeps } from "./types.js";

const tags = ["Quotes"];

export function receiverRoutes(app: Api, { clients }: RouteDeps): void {
  app.get(
    "/uma-providers",
    {
      schema: {
        summary: "List UMA providers",
        description:
          "The UMA providers the platform can pay, by domain, filtered by countryCode (ISO 3166-1 alpha-2) and currencyCode; the list envelope. Sandbox platforms: the sandbox's provider (sandbox.uma.money: USD, EUR, MXN; the US, Mexico and the euro area). Production platforms in a deployment without a UMA connector: 400 PAYMENT_RAIL_NOT_AVAILABLE with details.paymentRail UMA. Needs VIEW.",
        tags,
        querystring: ListUmaProvidersQuery,
        response: { 200: UmaProviderListSchema, ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const q = request.query;
      const res = await clients.quotesFx.listUmaProviders({
        platformId,
        countryCode: q.countryCode ?? "",
        currencyCode: q.currencyCode ?? "",
        page: pageOf(q),
      });
      return listEnvelope(
        res.providers.map((p) => ({
          name: p.name,
          domain: p.domain,
          supportedRegions: [...p.supportedRegions],
          supportedCurrencies: p.supportedCurrencies.map(currencyJson),
          allowListStatus: p.allowListStatus,
        })),
        res.pageInfo,
      );
    },
  );

  app.get(
    "/receiver/uma/:receiverUmaAddress",
    {
      schema: {
        summary: "Look up a UMA receiver",
        description:
          "Resolves a UMA address: lookupId (valid 5 minutes), supportedCurrencies with estimated rates and limits, requiredPayerDataFields. Sandbox receivers: $success.usd|eur|mxn, $pending.long.usd, $fail.compliance.usd @sandbox.uma.money; others → 404 UMA_NOT_FOUND. Query customerId or senderUmaAddress. With customerId (unknown → 404 USER_NOT_FOUND) the lookup opens the customer's transaction in status CREATED (no reconciliationInstructions, no money moved): a quote with this lookupId makes it PENDING, else it becomes EXPIRED with the lookup. Production platforms in a deployment without a UMA connector: 400 PAYMENT_RAIL_NOT_AVAILABLE (details.paymentRail UMA). Needs VIEW.",
        tags,
        params: UmaReceiverParams,
        querystring: ReceiverQuery,
        response: { 200: ReceiverLookupSchema, ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const res = await clients.quotesFx.lookupUmaReceiver({
        platformId,
        receiverUmaAddress: request.params.receiverUmaAddress,
        customerId: request.query.customerId ?? "",
        senderUmaAddress: request.query.senderUmaAddress ?? "",
      });
      return receiverLookupJson(res.lookup);
    },
  );

  app.get(
    "/receiver/external-account/:accountId",
    {
      schema: {
        summary: "Look up an external account as a receiver",
        description:
          "Like the UMA lookup, for an external account of the platform or its customers. Unknown account → 404 EXTERNAL_ACCOUNT_NOT_FOUND. With customerId the lookup opens the customer's CREATED transaction, as the UMA lookup does. Needs VIEW.",
        tags,
        params: AccountReceiverParams,
        querystring: ReceiverQuery,
        response: { 200: ReceiverLookupSchema, ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const res = await clients.quotesFx.lookupExternalAccountReceiver({
        platformId,
        accountId: request.params.accountId,
        customerId: request.query.customerId ?? "",
        senderUmaAddress: request.query.senderUmaAddress ?? "",
      });
      return receiverLookupJson(res.lookup);
    },
  );
}
