import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ListTransactionsRequestSchema } from "@corridor/proto/corridor/ledger/v1/ledger_service_pb.js";
import { Type, type Static } from "typebox";
import { principalOf } from "../auth.js";
import { timeRange } from "../mappers/tokens.js";
import { transactionToJson } from "../mappers/transactions.js";
import { Ref, errorResponses } from "../schemas/common.js";
import { CancelTransactionBody, ConfirmReceiptDeliveryBody, ListTransactionsQuery, TransactionIdParams, TransactionListSchema } from "../schemas/transactions.js";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { listEnvelope, pageOf } from "./list.js";
import type { Api, RouteDeps } from "./types.js";

const tags = ["Transactions"];

/** The query of GET /transactions (and GET /agents/me/transactions) as the ledger takes it. */
export function listTransactionsRequest(platformId: string, q: Partial<Static<typeof ListTransactionsQuery>>): MessageInitShape<typeof ListTransactionsRequestSchema> {
  return {
    platformId,
    customerId: q.customerId ?? "",
    platformCustomerId: q.platformCustomerId ?? "",
    status: q.status ?? "",
    type: q.type ?? "",
    created: timeRange(q.startDate, q.endDate),
    ascending: q.sortOrder === "asc",
    reference: q.reference ?? "",
    page: pageOf(q),
  };
}

export function transactionRoutes(app: Api, { clients }: RouteDeps): void {
  app.get(
    "/transactions",
    {
      schema: {
        summary: "List transactions",
        description: "Filters combine; startDate and endDate are inclusive; newest first unless sortOrder=asc. Needs VIEW.",
        tags,
        querystring: ListTransactionsQuery,
        response: { 200: TransactionListSchema, ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const res = await clients.ledger.listTransactions(listTransactionsRequest(platformId, request.query));
      return listEnvelope(res.transactions.map(transactionToJson), res.pageInfo);
    },
  );

  app.get(
    "/transactions/:transactionId",
    {
      schema: {
        summary: "Get a transaction",
        description: "Needs VIEW.",
        tags,
        params: TransactionIdParams,
        response: { 200: Ref("Transaction", "The transaction."), ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const res = await clients.ledger.getTransaction({ platformId, transactionId: request.params.transactionId });
      return transactionToJson(res.transaction);
    },
  );

  app.post(
    "/transactions/:transactionId/cancel",
    {
      config: { permission: "TRANSACT" },
      // Grid's body is optional: no body means no reason.
      preValidation: async (request) => {
        request.body ??= {};
      },
      schema: {
        summary: "Cancel a transaction",
        description:
          "Grid's cancelTransaction: cancels a transaction the rail does not have yet. A PENDING transfer (transfer-out or transfer-in) whose rail instruction has not left Corridor yet is withdrawn before any connector sees it (a transfer-out's hold goes back to the available balance); a PENDING quote not executed (or one still waiting for strong customer authentication, PENDING_AUTHORIZATION) is cancelled before its payout exists. The answer is the transaction, FAILED with failureDetail CANCELLED (failureReason OFFRAMP_FAILED, COLLECTION_FAILED for a transfer-in, QUOTE_EXECUTION_FAILED for a quote), and its OUTGOING_PAYMENT_FAILED / INCOMING_PAYMENT_FAILED webhook follows. Once the rail has it (the instruction handed to the connector, the quote executed, or the transaction PROCESSING or final), or for a transaction that is no payment in flight (a receiver lookup's CREATED, an incoming UMA payment): 409 TRANSACTION_NOT_CANCELLABLE. The body ({reason}) is optional. Needs TRANSACT.",
        tags,
        params: TransactionIdParams,
        body: Type.Optional(CancelTransactionBody),
        response: { 200: Ref("Transaction", "The cancelled transaction (FAILED, failureDetail CANCELLED)."), ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const res = await clients.ledger.cancelTransaction({ platformId, transactionId: request.params.transactionId, reason: request.body?.reason ?? "" });
      return transactionToJson(res.transaction);
    },
  );

  app.post(
    "/transactions/:transactionId/confirm",
    {
      config: { permission: "TRANSACT" },
      // Grid's body is optional: no body means now.
      preValidation: async (request) => {
        request.body ??= {};
      },
      schema: {
        summary: "Confirm receipt delivery",
        description:
          "Grid's confirmReceiptDelivery: records that the platform delivered the transaction's receipt to its customer (needed only where the platform must send receipts). receiptDeliveryConfirmedAt is the time given, or the current server time without one; calling it again replaces it. Any transaction, in any status; no webhook. Answers the transaction with receiptDeliveryConfirmedAt. Needs TRANSACT.",
        tags,
        params: TransactionIdParams,
        body: Type.Optional(ConfirmReceiptDeliveryBody),
        response: { 200: Ref("Transaction", "The transaction, with receiptDeliveryConfirmedAt."), ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const at = request.body?.receiptDeliveryConfirmedAt;
      const res = await clients.ledger.confirmReceiptDelivery({
        platformId,
        transactionId: request.params.transactionId,
        confirmedAt: at ? timestampFromDate(new Date(at)) : undefined,
      });
      return transactionToJson(res.transaction);
    },
  );
}
