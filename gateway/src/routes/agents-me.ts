import { errors } from "@corridor/kit";
import { Type } from "typebox";
import { agentOf, type AgentPrincipal } from "../auth.js";
import { markIdempotentEffectDone } from "../idempotency.js";
import { answerCreated, serviceKey } from "./external-accounts.js";
import { agentActionToJson, agentToJson } from "../mappers/agents.js";
import { externalAccountToJson } from "../mappers/external-accounts.js";
import { internalAccountToJson } from "../mappers/internal-accounts.js";
import { quoteJson } from "../mappers/quotes-fx.js";
import { transactionToJson } from "../mappers/transactions.js";
import { ActionIdParams, AgentActionListSchema, ListMyActionsQuery } from "../schemas/agents.js";
import { Ref, errorResponses } from "../schemas/common.js";
import {
  CreateCustomerExternalAccountBody,
  ExternalAccountIdParams,
  ExternalAccountListSchema,
  ListCustomerExternalAccountsQuery,
} from "../schemas/external-accounts.js";
import { InternalAccountListSchema, ListCustomerInternalAccountsQuery } from "../schemas/internal-accounts.js";
import { CreateQuoteBody, QuoteParams, QuoteSchema } from "../schemas/quotes-fx.js";
import { ListTransactionsQuery, TransactionIdParams, TransactionListSchema } from "../schemas/transactions.js";
import { IdempotencyHeaders, TransferBody } from "../schemas/transfers.js";
import { createQuoteRequest } from "./quotes.js";
import { listTransactionsRequest } from "./transactions.js";
import { listEnvelope, pageOf } from "./list.js";
import type { Api, RouteDeps } from "./types.js";

const tags = ["Agent operations"];

/** Every /agents/me route: Bearer only; a paused agent is 403 AGENT_PAUSED (but on GET /agents/me). */
const BEARER = "Authenticated with the agent's access token (Authorization: Bearer agt_…): 401 UNAUTHORIZED without it or with Basic credentials.";
const PAUSED = "403 AGENT_PAUSED while the agent is paused.";
const needs = (permission: string) => `403 FORBIDDEN (details.requiredPermission ${permission}) unless the policy grants ${permission}.`;

// The platform routes' schemas, without the filters an agent cannot use (its customer is implied).
const ListMyTransactionsQuery = Type.Omit(ListTransactionsQuery, ["customerId", "platformCustomerId"], {
  description: "Filters and paging of GET /agents/me/transactions (those of GET /transactions but the customer filters).",
});
const CreateMyExternalAccountBody = Type.Object(
  { ...CreateCustomerExternalAccountBody.properties, customerId: Type.Optional(CreateCustomerExternalAccountBody.properties.customerId) },
  { additionalProperties: false, description: "The external account to register for the agent's customer (customerId optional: inferred)." },
);

/** A customerId the agent sent must be its own customer's: any other is 404, as a foreign id is. */
function assertOwnCustomer(agent: AgentPrincipal, customerId: string | undefined): void {
  if (customerId !== undefined && customerId !== agent.customerId) throw errors.notFound("Customer", customerId);
}

/**
 * The agent's side (HTTP Bearer). Money-moving submissions go to the agents service, which
 * enforces the policy and answers an AgentAction; reads of transactions and accounts go to the
 * ledger restricted to the agent's customer (another customer's record is 404).
 */
export function agentMeRoutes(app: Api, { clients }: RouteDeps): void {
  app.get(
    "/agents/me",
    {
      config: { auth: "bearer", allowPausedAgent: true },
      schema: {
        summary: "Get the calling agent",
        description: `The agent with its policy and current usage; answers a paused agent too (isPaused true). ${BEARER}`,
        tags,
        response: { 200: Ref("Agent", "The agent."), ...errorResponses },
      },
    },
    async (request) => {
      const { platformId, agentId } = agentOf(request);
      const res = await clients.agents.getAgent({ platformId, agentId });
      return agentToJson(res.agent);
    },
  );

  app.get(
    "/agents/me/actions",
    {
      config: { auth: "bearer" },
      schema: {
        summary: "List the agent's actions",
        description: `The agent's own actions, newest first; poll it for approval decisions. ${BEARER} ${PAUSED}`,
        tags,
        querystring: ListMyActionsQuery,
        response: { 200: AgentActionListSchema, ...errorResponses },
      },
    },
    async (request) => {
      const { platformId, agentId } = agentOf(request);
      const q = request.query;
      const res = await clients.agents.listAgentActions({ platformId, agentId, status: q.status ?? "", page: pageOf(q) });
      return listEnvelope(res.actions.map(agentActionToJson), res.pageInfo);
    },
  );

  app.get(
    "/agents/me/actions/:actionId",
    {
      config: { auth: "bearer" },
      schema: {
        summary: "Get one of the agent's actions",
        description: `404 AGENT_ACTION_NOT_FOUND (also for another agent's action). ${BEARER} ${PAUSED}`,
        tags,
        params: ActionIdParams,
        response: { 200: Ref("AgentAction", "The action."), ...errorResponses },
      },
    },
    async (request) => {
      const { platformId, agentId } = agentOf(request);
      const res = await clients.agents.getAgentAction({ platformId, agentId, actionId: request.params.actionId });
      return agentActionToJson(res.action);
    },
  );

  app.post(
    "/agents/me/quotes",
    {
      config: { auth: "bearer", agentPermission: "CREATE_QUOTES" },
      schema: {
        summary: "Create a quote for the agent's customer",
        description: `As POST /quotes, for the agent's customer: the source account must be the customer's (404 otherwise; source.customerId, when sent, must be the agent's customer, else 404 USER_NOT_FOUND), and allowedAccountIds applies (403 ACCOUNT_NOT_ALLOWED). 201 the Quote (PENDING). immediatelyExecute also needs EXECUTE_QUOTES and submits the execution under the policy (the quote answers PROCESSING under AUTO, PENDING while awaiting approval; 403 SPENDING_LIMIT_EXCEEDED over a limit). Quote errors as POST /quotes (400 INVALID_INPUT, 400 AMOUNT_OUT_OF_RANGE, 404). Honours Idempotency-Key (scoped to the agent). ${BEARER} ${PAUSED} ${needs("CREATE_QUOTES")}`,
        tags,
        headers: IdempotencyHeaders,
        body: CreateQuoteBody,
        response: { 201: QuoteSchema, ...errorResponses },
      },
    },
    async (request, reply) => {
      const agent = agentOf(request);
      const b = request.body;
      assertOwnCustomer(agent, b.source.customerId);
      if (b.immediatelyExecute && !agent.permissions.includes("EXECUTE_QUOTES")) {
        throw errors.forbidden("immediatelyExecute needs the EXECUTE_QUOTES permission", { requiredPermission: "EXECUTE_QUOTES" });
      }
      const key = request.headers["idempotency-key"] ?? "";
      const quote = createQuoteRequest(agent.platformId, { ...b, source: { ...b.source, customerId: agent.customerId } }, "");
      const res = await clients.agents.createAgentQuote({ platformId: agent.platformId, agentId: agent.agentId, quote, idempotencyKey: key });
      markIdempotentEffectDone(request);
      if (res.replayed) reply.header("Idempotent-Replayed", "true");
      return reply.code(201).send(quoteJson(res.quote));
    },
  );

  app.get(
    "/agents/me/quotes/:quoteId",
    {
      config: { auth: "bearer", agentPermission: "CREATE_QUOTES" },
      schema: {
        summary: "Get a quote the agent created",
        description: `404 QUOTE_NOT_FOUND for any other quote. ${BEARER} ${PAUSED} ${needs("CREATE_QUOTES")}`,
        tags,
        params: QuoteParams,
        response: { 200: QuoteSchema, ...errorResponses },
      },
    },
    async (request) => {
      const { platformId, agentId } = agentOf(request);
      const res = await clients.agents.getAgentQuote({ platformId, agentId, quoteId: request.params.quoteId });
      return quoteJson(res.quote);
    },
  );

  app.post(
    "/agents/me/quotes/:quoteId/execute",
    {
      config: { auth: "bearer", agentPermission: "EXECUTE_QUOTES" },
      schema: {
        summary: "Submit a quote's execution",
        description: `Submits the execution of a quote the agent created, under the policy: 200 the AgentAction — APPROVED (executed, with its transaction) under AUTO, PENDING_APPROVAL when the policy asks for approval (GET /agents/approvals; webhook AGENT_ACTION_PENDING_APPROVAL), or FAILED with failureReason when the ledger refuses at once (INSUFFICIENT_BALANCE, QUOTE_EXPIRED). 403 SPENDING_LIMIT_EXCEEDED (details limit, limitAmount, used, requested, currency) and 403 ACCOUNT_NOT_ALLOWED record nothing; 404 QUOTE_NOT_FOUND; 409 INVALID_STATE_TRANSITION, 409 QUOTE_EXPIRED. Honours Idempotency-Key (scoped to the agent). ${BEARER} ${PAUSED} ${needs("EXECUTE_QUOTES")}`,
        tags,
        headers: IdempotencyHeaders,
        params: QuoteParams,
        response: { 200: Ref("AgentAction", "The action."), ...errorResponses },
      },
    },
    async (request, reply) => {
      const { platformId, agentId } = agentOf(request);
      const res = await clients.agents.submitQuoteExecution({ platformId, agentId, quoteId: request.params.quoteId, idempotencyKey: request.headers["idempotency-key"] ?? "" });
      markIdempotentEffectDone(request);
      if (res.replayed) reply.header("Idempotent-Replayed", "true");
      return agentActionToJson(res.action);
    },
  );

  for (const direction of ["in", "out"] as const) {
    app.post(
      `/agents/me/transfer-${direction}`,
      {
        config: { auth: "bearer", agentPermission: "CREATE_TRANSFERS" },
        schema: {
          summary: direction === "in" ? "Submit a pull from the customer's external account" : "Submit a payout to the customer's external account",
          description: `Body as POST /transfer-${direction}; both accounts must be the agent's customer's (404 otherwise) and allowed by the policy (403 ACCOUNT_NOT_ALLOWED). 201 the AgentAction (type TRANSFER_${direction.toUpperCase()}) — APPROVED with its transaction under AUTO, PENDING_APPROVAL when the policy asks for approval, or FAILED with failureReason (INSUFFICIENT_BALANCE, EXECUTION_FAILED) when the ledger refuses at once. 403 SPENDING_LIMIT_EXCEEDED (details limit, limitAmount, used, requested, currency) records nothing. Honours Idempotency-Key (scoped to the agent). ${BEARER} ${PAUSED} ${needs("CREATE_TRANSFERS")}`,
          tags,
          headers: IdempotencyHeaders,
          body: TransferBody,
          response: { 201: Ref("AgentAction", "The action."), ...errorResponses },
        },
      },
      async (request, reply) => {
        const { platformId, agentId } = agentOf(request);
        const b = request.body;
        const res = await clients.agents.submitTransfer({
          platformId,
          agentId,
          direction: direction === "in" ? "IN" : "OUT",
          sourceAccountId: b.source.accountId,
          destinationAccountId: b.destination.accountId,
          amount: BigInt(b.amount),
          description: b.description ?? "",
          idempotencyKey: request.headers["idempotency-key"] ?? "",
        });
        markIdempotentEffectDone(request);
        if (res.replayed) reply.header("Idempotent-Replayed", "true");
        return reply.code(201).send(agentActionToJson(res.action));
      },
    );
  }

  app.get(
    "/agents/me/transactions",
    {
      config: { auth: "bearer", agentPermission: "VIEW_TRANSACTIONS" },
      schema: {
        summary: "List the customer's transactions",
        description: `The transactions of the agent's customer (all of them, not only the agent's; those the agent started carry agentId). Filters as GET /transactions but the customer filters; startDate and endDate inclusive; newest first unless sortOrder=asc. ${BEARER} ${PAUSED} ${needs("VIEW_TRANSACTIONS")}`,
        tags,
        querystring: ListMyTransactionsQuery,
        response: { 200: TransactionListSchema, ...errorResponses },
      },
    },
    async (request) => {
      const { platformId, customerId } = agentOf(request);
      // The query schema has no customer filters, but unknown query parameters pass through: override both.
      const res = await clients.ledger.listTransactions({ ...listTransactionsRequest(platformId, request.query), customerId, platformCustomerId: "" });
      return listEnvelope(res.transactions.map(transactionToJson), res.pageInfo);
    },
  );

  app.get(
    "/agents/me/transactions/:transactionId",
    {
      config: { auth: "bearer", agentPermission: "VIEW_TRANSACTIONS" },
      schema: {
        summary: "Get a transaction of the customer",
        description: `404 TRANSACTION_NOT_FOUND for another customer's transaction. ${BEARER} ${PAUSED} ${needs("VIEW_TRANSACTIONS")}`,
        tags,
        params: TransactionIdParams,
        response: { 200: Ref("Transaction", "The transaction."), ...errorResponses },
      },
    },
    async (request) => {
      const { platformId, customerId } = agentOf(request);
      const res = await clients.ledger.getTransaction({ platformId, transactionId: request.params.transactionId, customerId });
      return transactionToJson(res.transaction);
    },
  );

  app.get(
    "/agents/me/internal-accounts",
    {
      config: { auth: "bearer" },
      schema: {
        summary: "List the customer's internal accounts",
        description: `The agent's customer's internal accounts with their balances, oldest first; filters currency and type. customerId, when sent, must be the agent's customer (404 USER_NOT_FOUND otherwise). ${BEARER} ${PAUSED}`,
        tags,
        querystring: ListCustomerInternalAccountsQuery,
        response: { 200: InternalAccountListSchema, ...errorResponses },
      },
    },
    async (request) => {
      const agent = agentOf(request);
      const q = request.query;
      assertOwnCustomer(agent, q.customerId);
      const res = await clients.ledger.listInternalAccounts({
        platformId: agent.platformId,
        owner: "CUSTOMER",
        customerId: agent.customerId,
        currency: q.currency ?? "",
        type: q.type ?? "",
        page: pageOf(q),
      });
      return listEnvelope(res.accounts.map(internalAccountToJson), res.pageInfo);
    },
  );

  app.post(
    "/agents/me/external-accounts",
    {
      config: { auth: "bearer", agentPermission: "MANAGE_EXTERNAL_ACCOUNTS" },
      schema: {
        summary: "Register an external account of the customer",
        description: `As POST /customers/external-accounts, for the agent's customer: customerId is inferred and, when sent, must be the agent's customer (404 USER_NOT_FOUND otherwise). 201 the ExternalAccount; 400 INVALID_INPUT naming the field, 400 INVALID_BANK_ACCOUNT. Honours Idempotency-Key (scoped to the agent; the ledger stores the answer with the account). ${BEARER} ${PAUSED} ${needs("MANAGE_EXTERNAL_ACCOUNTS")}`,
        tags,
        headers: IdempotencyHeaders,
        body: CreateMyExternalAccountBody,
        response: { 201: Ref("ExternalAccount", "The new account."), ...errorResponses },
      },
    },
    async (request, reply) => {
      const agent = agentOf(request);
      const b = request.body;
      assertOwnCustomer(agent, b.customerId);
      const res = await clients.ledger.createExternalAccount({
        platformId: agent.platformId,
        owner: "CUSTOMER",
        customerId: agent.customerId,
        currency: b.currency,
        accountInfo: b.accountInfo,
        platformAccountId: b.platformAccountId ?? "",
        defaultUmaDepositAccount: b.defaultUmaDepositAccount ?? false,
        idempotencyKey: serviceKey(request),
      });
      return answerCreated(request, reply, res);
    },
  );

  app.get(
    "/agents/me/external-accounts",
    {
      config: { auth: "bearer" },
      schema: {
        summary: "List the customer's external accounts",
        description: `The agent's customer's external accounts, newest first; filter currency. customerId, when sent, must be the agent's customer (404 USER_NOT_FOUND otherwise). ${BEARER} ${PAUSED}`,
        tags,
        querystring: ListCustomerExternalAccountsQuery,
        response: { 200: ExternalAccountListSchema, ...errorResponses },
      },
    },
    async (request) => {
      const agent = agentOf(request);
      const q = request.query;
      assertOwnCustomer(agent, q.customerId);
      const res = await clients.ledger.listExternalAccounts({
        platformId: agent.platformId,
        owner: "CUSTOMER",
        customerId: agent.customerId,
        currency: q.currency ?? "",
        page: pageOf(q),
      });
      return listEnvelope(res.accounts.map(externalAccountToJson), res.pageInfo);
    },
  );

  app.get(
    "/agents/me/external-accounts/:externalAccountId",
    {
      config: { auth: "bearer" },
      schema: {
        summary: "Get an external account of the customer",
        description: `404 EXTERNAL_ACCOUNT_NOT_FOUND for another customer's account. ${BEARER} ${PAUSED}`,
        tags,
        params: ExternalAccountIdParams,
        response: { 200: Ref("ExternalAccount", "The account."), ...errorResponses },
      },
    },
    async (request) => {
      const { platformId, customerId } = agentOf(request);
      const res = await clients.ledger.getExternalAccount({ platformId, owner: "CUSTOMER", accountId: request.params.externalAccountId, customerId });
      return externalAccountToJson(res.account);
    },
  );

  app.delete(
    "/agents/me/external-accounts/:externalAccountId",
    {
      config: { auth: "bearer", agentPermission: "MANAGE_EXTERNAL_ACCOUNTS" },
      schema: {
        summary: "Delete an external account of the customer",
        description: `Removes the account from use (204, no body). 404 EXTERNAL_ACCOUNT_NOT_FOUND for another customer's account. ${BEARER} ${PAUSED} ${needs("MANAGE_EXTERNAL_ACCOUNTS")}`,
        tags,
        params: ExternalAccountIdParams,
        response: { 204: { type: "null", description: "Deleted." }, ...errorResponses },
      },
    },
    async (request, reply) => {
      const { platformId, customerId } = agentOf(request);
      await clients.ledger.deleteExternalAccount({ platformId, owner: "CUSTOMER", accountId: request.params.externalAccountId, customerId });
      return reply.code(204).send(null);
    },
  );
}

