import { principalOf } from "../auth.js";
import { internalAccountToJson } from "../mappers/internal-accounts.js";
import { errorResponses } from "../schemas/common.js";
import { InternalAccountListSchema, ListCustomerInternalAccountsQuery, ListPlatformInternalAccountsQuery } from "../schemas/internal-accounts.js";
import { listEnvelope, pageOf } from "./list.js";
import type { Api, RouteDeps } from "./types.js";

const tags = ["Internal accounts"];

export function internalAccountRoutes(app: Api, { clients }: RouteDeps): void {
  app.get(
    "/customers/internal-accounts",
    {
      schema: {
        summary: "List customers' internal accounts",
        description: "Every customer gets one account per enabled currency and one EMBEDDED_WALLET (USDC), opened when the customer is created. Oldest first. Needs VIEW.",
        tags,
        querystring: ListCustomerInternalAccountsQuery,
        response: { 200: InternalAccountListSchema, ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const q = request.query;
      const res = await clients.ledger.listInternalAccounts({
        platformId,
        owner: "CUSTOMER",
        customerId: q.customerId ?? "",
        currency: q.currency ?? "",
        type: q.type ?? "",
        page: pageOf(q),
      });
      return listEnvelope(res.accounts.map(internalAccountToJson), res.pageInfo);
    },
  );

  app.get(
    "/platform/internal-accounts",
    {
      schema: {
        summary: "List the platform's internal accounts",
        description: "One account per supported currency, opened when the platform is created or a currency is added. Needs VIEW.",
        tags,
        querystring: ListPlatformInternalAccountsQuery,
        response: { 200: InternalAccountListSchema, ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const q = request.query;
      const res = await clients.ledger.listInternalAccounts({
        platformId,
        owner: "PLATFORM",
        currency: q.currency ?? "",
        type: q.type ?? "",
        page: { limit: 100, cursor: "" },
      });
      return listEnvelope(res.accounts.map(internalAccountToJson), res.pageInfo);
    },
  );
}
