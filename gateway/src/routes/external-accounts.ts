import { principalOf } from "../auth.js";
import { externalAccountToJson } from "../mappers/external-accounts.js";
import { Ref, errorResponses } from "../schemas/common.js";
import {
  CreateCustomerExternalAccountBody,
  CreatePlatformExternalAccountBody,
  ExternalAccountIdParams,
  ExternalAccountListSchema,
  ListCustomerExternalAccountsQuery,
  ListPlatformExternalAccountsQuery,
} from "../schemas/external-accounts.js";
import { listEnvelope, pageOf } from "./list.js";
import type { Api, RouteDeps } from "./types.js";

const tags = ["External accounts"];

/** The same four routes for customers' accounts and for the platform's own. */
export function externalAccountRoutes(app: Api, { clients }: RouteDeps): void {
  app.post(
    "/customers/external-accounts",
    {
      config: { permission: "MANAGE" },
      schema: {
        summary: "Register a customer's external account",
        description:
          "Validates accountInfo by accountType (400 INVALID_INPUT naming the field) and verifies the beneficiary (sandbox: identifier suffixes 102-107; 105 answers 400 INVALID_BANK_ACCOUNT and stores nothing). defaultUmaDepositAccount moves the customer's default here. Needs MANAGE.",
        tags,
        body: CreateCustomerExternalAccountBody,
        response: { 201: Ref("ExternalAccount", "The new account."), ...errorResponses },
      },
    },
    async (request, reply) => {
      const { platformId } = principalOf(request);
      const b = request.body;
      const res = await clients.ledger.createExternalAccount({
        platformId,
        owner: "CUSTOMER",
        customerId: b.customerId,
        currency: b.currency,
        accountInfo: b.accountInfo,
        platformAccountId: b.platformAccountId ?? "",
        defaultUmaDepositAccount: b.defaultUmaDepositAccount ?? false,
      });
      return reply.code(201).send(externalAccountToJson(res.account));
    },
  );

  app.post(
    "/platform/external-accounts",
    {
      config: { permission: "MANAGE" },
      schema: {
        summary: "Register an external account of the platform",
        description: "As for customers, with customerId null. Needs MANAGE.",
        tags,
        body: CreatePlatformExternalAccountBody,
        response: { 201: Ref("ExternalAccount", "The new account."), ...errorResponses },
      },
    },
    async (request, reply) => {
      const { platformId } = principalOf(request);
      const b = request.body;
      const res = await clients.ledger.createExternalAccount({
        platformId,
        owner: "PLATFORM",
        currency: b.currency,
        accountInfo: b.accountInfo,
        platformAccountId: b.platformAccountId ?? "",
      });
      return reply.code(201).send(externalAccountToJson(res.account));
    },
  );

  app.get(
    "/customers/external-accounts",
    {
      schema: {
        summary: "List customers' external accounts",
        description: "Newest first. Needs VIEW.",
        tags,
        querystring: ListCustomerExternalAccountsQuery,
        response: { 200: ExternalAccountListSchema, ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const q = request.query;
      const res = await clients.ledger.listExternalAccounts({
        platformId,
        owner: "CUSTOMER",
        customerId: q.customerId ?? "",
        currency: q.currency ?? "",
        page: pageOf(q),
      });
      return listEnvelope(res.accounts.map(externalAccountToJson), res.pageInfo);
    },
  );

  app.get(
    "/platform/external-accounts",
    {
      schema: {
        summary: "List the platform's external accounts",
        description: "Newest first. Needs VIEW.",
        tags,
        querystring: ListPlatformExternalAccountsQuery,
        response: { 200: ExternalAccountListSchema, ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const q = request.query;
      const res = await clients.ledger.listExternalAccounts({
        platformId,
        owner: "PLATFORM",
        currency: q.currency ?? "",
        page: pageOf(q),
      });
      return listEnvelope(res.accounts.map(externalAccountToJson), res.pageInfo);
    },
  );

  for (const [prefix, owner] of [
    ["/customers", "CUSTOMER"],
    ["/platform", "PLATFORM"],
  ] as const) {
    app.get(
      `${prefix}/external-accounts/:externalAccountId`,
      {
        schema: {
          summary: owner === "CUSTOMER" ? "Get a customer's external account" : "Get an external account of the platform",
          description: "Needs VIEW.",
          tags,
          params: ExternalAccountIdParams,
          response: { 200: Ref("ExternalAccount", "The account."), ...errorResponses },
        },
      },
      async (request) => {
        const { platformId } = principalOf(request);
        const res = await clients.ledger.getExternalAccount({ platformId, owner, accountId: request.params.externalAccountId });
        return externalAccountToJson(res.account);
      },
    );

    app.delete(
      `${prefix}/external-accounts/:externalAccountId`,
      {
        config: { permission: "MANAGE" },
        schema: {
          summary: owner === "CUSTOMER" ? "Delete a customer's external account" : "Delete an external account of the platform",
          description: "Removes the account from use (204, no body); transfers to or from it answer 404 afterwards. Needs MANAGE.",
          tags,
          params: ExternalAccountIdParams,
          response: { 204: { type: "null", description: "Deleted." }, ...errorResponses },
        },
      },
      async (request, reply) => {
        const { platformId } = principalOf(request);
        await clients.ledger.deleteExternalAccount({ platformId, owner, accountId: request.params.externalAccountId });
        return reply.code(204).send(null);
      },
    );
  }
}
