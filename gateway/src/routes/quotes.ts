import type { MessageInitShape } from "@bufbuild/protobuf";
import type { CreateQuoteRequestSchema } from "@corridor/proto/corridor/quotes_fx/v1/quotes_fx_service_pb.js";
import type { Static } from "typebox";
import { principalOf } from "../auth.js";
import { markIdempotentEffectDone } from "../idempotency.js";
import { quoteJson } from "../mappers/quotes-fx.js";
import { errorResponses } from "../schemas/common.js";
import { CreateQuoteBody, ExecuteQuoteHeaders, ListQuotesQuery, QuoteListSchema, QuoteParams, QuoteSchema } from "../schemas/quotes-fx.js";
import { listEnvelope, pageOf } from "./list.js";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { IdempotencyHeaders } from "../schemas/transfers.js";
import type { Api, RouteDeps } from "./types.js";

const tags = ["Quotes"];

/** The body of POST /quotes (and POST /agents/me/quotes) as quotes-fx takes it. */
export function createQuoteRequest(platformId: string, b: Static<typeof CreateQuoteBody>, idempotencyKey: string): MessageInitShape<typeof CreateQuoteRequestSchema> {
  return {
    platformId,
    source: { sourceType: b.source.sourceType, accountId: b.source.accountId ?? "", customerId: b.source.customerId ?? "", currency: b.source.currency ?? "" },
    destination: {
      destinationType: b.destination.destinationType,
      accountId: b.destination.accountId ?? "",
      paymentRail: b.destination.paymentRail ?? "",
      umaAddress: b.destination.umaAddress ?? "",
      currency: b.destination.currency ?? "",
    },
    lockedCurrencySide: b.lockedCurrencySide,
    lockedCurrencyAmount: BigInt(b.lockedCurrencyAmount),
    lookupId: b.lookupId ?? "",
    immediatelyExecute: b.immediatelyExecute ?? false,
    description: b.description ?? "",
    purposeOfPayment: b.purposeOfPayment ?? "",
    senderCustomerInfo: b.senderCustomerInfo ?? {},
    counterpartyInformation: b.counterpartyInformation ?? {},
    idempotencyKey,
  };
}

export function quoteRoutes(app: Api, { clients }: RouteDeps): void {
  app.post(
    "/quotes",
    {
      config: { permission: "TRANSACT" },
      schema: {
        summary: "Create a quote",
        description:
          "Validates and prices a payment and creates its OUTGOING transaction (PENDING); the quote lives 5 minutes (then it and its transaction are EXPIRED, failureReason QUOTE_EXPIRED). 400 INVALID_INPUT naming every bad field, 400 AMOUNT_OUT_OF_RANGE outside the platform's per-currency limits (or the receiver's), 404 for unknown accounts or lookups, 400 LOOKUP_EXPIRED. REALTIME_FUNDING sources carry paymentInstructions; EMBEDDED_WALLET sources carry payloadToSign and refuse immediatelyExecute (400). immediatelyExecute answers the executed quote. Honours Idempotency-Key. Needs TRANSACT.",
        tags,
        headers: IdempotencyHeaders,
        body: CreateQuoteBody,
        response: { 201: QuoteSchema, ...errorResponses },
      },
    },
    async (request, reply) => {
      const { platformId } = principalOf(request);
      const res = await clients.quotesFx.createQuote(createQuoteRequest(platformId, request.body, request.headers["idempotency-key"] ?? ""));
      markIdempotentEffectDone(request);
      if (res.replayed) reply.header("Idempotent-Replayed", "true");
      return reply.code(201).send(quoteJson(res.quote));
    },
  );

  app.get(
    "/quotes",
    {
      schema: {
        summary: "List quotes",
        description:
          "The platform's quotes, newest first, filtered by the sending customerId, status and creation time (createdAfter/createdBefore, inclusive); the list envelope. A listed PENDING quote past expiresAt is answered EXPIRED (as by GET /quotes/{id}). Needs VIEW.",
        tags,
        querystring: ListQuotesQuery,
        response: { 200: QuoteListSchema, ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const q = request.query;
      const res = await clients.quotesFx.listQuotes({
        platformId,
        customerId: q.customerId ?? "",
        status: q.status ?? "",
        createdAfter: q.createdAfter ? timestampFromDate(new Date(q.createdAfter)) : undefined,
        createdBefore: q.createdBefore ? timestampFromDate(new Date(q.createdBefore)) : undefined,
        page: pageOf(q),
      });
      return listEnvelope(res.quotes.map(quoteJson), res.pageInfo);
    },
  );

  app.get(
    "/quotes/:quoteId",
    {
      schema: {
        summary: "Get a quote",
        description: "The quote with its current status (it follows the quote's transaction; a PENDING quote past expiresAt is expired on the way). 404 QUOTE_NOT_FOUND. Needs VIEW.",
        tags,
        params: QuoteParams,
        response: { 200: QuoteSchema, ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const res = await clients.quotesFx.getQuote({ platformId, quoteId: request.params.quoteId });
      return quoteJson(res.quote);
    },
  );

  app.post(
    "/quotes/:quoteId/execute",
    {
      config: { permission: "TRANSACT" },
      schema: {
        summary: "Execute a quote",
        description:
          "Executes a PENDING quote: 200 the Quote (PROCESSING or COMPLETED). From an internal account the ledger debits at once and hands the payout to the rail. From an EMBEDDED_WALLET, Service-Wallet-Signature (or Grid-Wallet-Signature) over the quote's payloadToSign is required; auth-sessions verifies it (401 UNAUTHORIZED or WALLET_SIGNATURE_BODY_MISMATCH). 409 INVALID_STATE_TRANSITION, 409 QUOTE_EXPIRED (x-should-retry: false); 400 QUOTE_NOT_EXECUTABLE for REALTIME_FUNDING quotes (pay their instructions). Honours Idempotency-Key. Needs TRANSACT.",
        tags,
        headers: ExecuteQuoteHeaders,
        params: QuoteParams,
        response: { 200: QuoteSchema, ...errorResponses },
      },
    },
    async (request, reply) => {
      const { platformId } = principalOf(request);
      const h = request.headers;
      const res = await clients.quotesFx.executeQuote({
        platformId,
        quoteId: request.params.quoteId,
        idempotencyKey: h["idempotency-key"] ?? "",
        requestId: h["request-id"] ?? "",
        signature: h["service-wallet-signature"] ?? h["grid-wallet-signature"] ?? "",
      });
      markIdempotentEffectDone(request);
      if (res.replayed) reply.header("Idempotent-Replayed", "true");
      return quoteJson(res.quote);
    },
  );
}
