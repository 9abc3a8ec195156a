import { principalOf } from "../auth.js";
import { receiverLookupJson } from "../mappers/quotes-fx.js";
import { errorResponses } from "../schemas/common.js";
import { AccountReceiverParams, ReceiverLookupSchema, ReceiverQuery, UmaReceiverParams } from "../schemas/quotes-fx.js";
import type { Api, RouteDeps } from "./types.js";

const tags = ["Quotes"];

export function receiverRoutes(app: Api, { clients }: RouteDeps): void {
  app.get(
    "/receiver/uma/:receiverUmaAddress",
    {
      schema: {
        summary: "Look up a UMA receiver",
        description:
          "Resolves a UMA address: lookupId (valid 5 minutes), supportedCurrencies with estimated rates and limits, requiredPayerDataFields. Sandbox receivers: $success.usd|eur|mxn, $pending.long.usd, $fail.compliance.usd @sandbox.uma.money; others → 404 UMA_NOT_FOUND. Query customerId or senderUmaAddress. Needs VIEW.",
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
        description: "Like the UMA lookup, for an external account of the platform or its customers. Unknown account → 404 EXTERNAL_ACCOUNT_NOT_FOUND. Needs VIEW.",
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
