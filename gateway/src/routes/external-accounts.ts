import type { FastifyReply, FastifyRequest } from "fastify";
import { principalOf } from "../auth.js";
import { keyScope, markIdempotentEffectDone } from "../idempotency.js";
import { IdempotencyHeaders } from "../schemas/transfers.js";
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

/** The request's Idempotency-Key as the ledger stores it: scoped like the gateway's (an agent's keys apart); empty for none. */
export function serviceKey(request: FastifyRequest): string {
  const key = request.headers["idempotency-key"];
  return typeof key === "string" && request.principal ? keyScope(request.principal, key).key : "";
}

/** 201 the new account, or the first answer again under its Idempotency-Key. */
export function answerCreated(request: FastifyRequest, reply: FastifyReply, res: { account?: Parameters<typeof externalAccountToJson>[0]; replayed: boolean }) {
  markIdempotentEffectDone(request);
  if (res.replayed) reply.header("Idempotent-Replayed", "true");
  return reply.code(201).send(externalAccountToJson(res.account));
}

/** The same four routes for customers' accounts and for the platform's own. */
export function externalAccountRoutes(app: Api, { clients }: RouteDeps): void {
  app.post(
    "/customers/external-accounts",
    {
      config: { permission: "MANAGE" },
      schema: {
        summary: "Register a customer's external account",
        description:
          "Validates accountInfo by accountType (400 INVALID_INPUT naming the field) and verifies the beneficiary (sandbox: identifier suffixes 102-107; 105 answers 400 INVALID_BANK_ACCOUNT and stores nothing). defaultUmaDepositAccount moves the customer's default here. Honours Idempotency-Key: the ledger stores the first answer with the account (they commit together), so the same key and body answer that account again (Idempotent-Replayed: true) and never register a second one. Needs MANAGE.",
        tags,
        headers: IdempotencyHeaders,
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
        idempotencyKey: serviceKey(request),
      });
      return answerCreated(request, reply, res);
    },
  );

  app.post(
    "/platform/external-accounts",
    {
      config: { permission: "MANAGE" },
      schema: {
        summary: "Register an external account of the platform",
        description: "As for customers, with customerId null; honours Idempotency-Key the same way. Needs MANAGE.",
        tags,
        headers: IdempotencyHeaders,
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
        idempotencyKey: serviceKey(request),
      });
      return answerCreated(request, reply, res);
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
