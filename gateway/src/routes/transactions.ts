import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ListTransactionsRequestSchema } from "@corridor/proto/corridor/ledger/v1/ledger_service_pb.js";
import type { Static } from "typebox";
import { principalOf } from "../auth.js";
import { timeRange } from "../mappers/tokens.js";
import { transactionToJson } from "../mappers/transactions.js";
import { Ref, errorResponses } from "../schemas/common.js";
import { ListTransactionsQuery, TransactionIdParams, TransactionListSchema } from "../schemas/transactions.js";
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
}
