import { principalOf } from "../auth.js";
import { markIdempotentEffectDone } from "../idempotency.js";
import { transactionToJson } from "../mappers/transactions.js";
import { Ref, errorResponses } from "../schemas/common.js";
import { ApproveIncomingBody, RejectIncomingBody, UmaReceiveBody } from "../schemas/incoming-payments.js";
import { TransactionIdParams } from "../schemas/transactions.js";
import { IdempotencyHeaders } from "../schemas/transfers.js";
import type { Api, RouteDeps } from "./types.js";

/**
 * Incoming UMA payments (issue 5; decisions §8): POST /sandbox/uma/receive runs the platform
 * approval exchange (quotes-fx orchestrates it), POST /transactions/{id}/approve and /reject
 * decide a payment the platform acknowledged with 202.
 */
export function incomingPaymentRoutes(app: Api, { clients }: RouteDeps): void {
  app.post(
    "/sandbox/uma/receive",
    {
      config: { permission: "TRANSACT", sandboxOnly: true },
      schema: {
        summary: "Receive a UMA payment (sandbox)",
        description:
          "Simulates an incoming UMA payment to the customer whose umaAddress is receiverUmaAddress (404 UMA_NOT_FOUND otherwise) or, as Grid allows, the customer named by customerId (404 when it is not the platform's; 400 naming body.receiverUmaAddress when both are given and disagree; one of them is required), credited to the customer's internal account in the receiving currency. The platform's webhookEndpoint gets INCOMING_PAYMENT_PENDING and the call waits for its reply: 200 approves (COMPLETED), 202 leaves the payment PENDING for POST /transactions/{id}/approve or /reject within the approval window (else FAILED PAYMENT_APPROVAL_TIMED_OUT), any other reply or none fails it (FAILED PAYMENT_APPROVAL_WEBHOOK_ERROR). Without a webhookEndpoint it is approved at once. Honours Idempotency-Key. Sandbox platforms only (403). Needs TRANSACT.",
        tags: ["Sandbox"],
        headers: IdempotencyHeaders,
        body: UmaReceiveBody,
        response: { 200: Ref("Transaction", "The INCOMING transaction after the approval exchange."), ...errorResponses },
      },
    },
    async (request, reply) => {
      const { platformId } = principalOf(request);
      const b = request.body;
      const res = await clients.quotesFx.receiveUmaPayment({
        platformId,
        senderUmaAddress: b.senderUmaAddress,
        receiverUmaAddress: b.receiverUmaAddress ?? "",
        customerId: b.customerId ?? "",
        receivingCurrencyCode: b.receivingCurrencyCode,
        receivingCurrencyAmount: BigInt(b.receivingCurrencyAmount),
        idempotencyKey: request.headers["idempotency-key"] ?? "",
      });
      markIdempotentEffectDone(request);
      if (res.replayed) reply.header("Idempotent-Replayed", "true");
      return transactionToJson(res.transaction);
    },
  );

  app.post(
    "/transactions/:transactionId/approve",
    {
      config: { permission: "TRANSACT" },
      schema: {
        summary: "Approve an incoming payment",
        description:
          "Approves an incoming payment the platform acknowledged with 202: the receiver is credited and the transaction is COMPLETED. Not awaiting approval (already decided, timed out, or not an incoming UMA payment) → 409 TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL. Needs TRANSACT.",
        tags: ["Transactions"],
        params: TransactionIdParams,
        body: ApproveIncomingBody,
        response: { 200: Ref("Transaction", "The COMPLETED transaction."), ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const res = await clients.quotesFx.approveIncomingPayment({
        platformId,
        transactionId: request.params.transactionId,
        receiverCustomerInfo: request.body?.receiverCustomerInfo as never,
      });
      return transactionToJson(res.transaction);
    },
  );

  app.post(
    "/transactions/:transactionId/reject",
    {
      config: { permission: "TRANSACT" },
      schema: {
        summary: "Reject an incoming payment",
        description:
          "Rejects an incoming payment the platform acknowledged with 202: nothing is credited and the transaction is REJECTED (reason kept as failureDetail). Not awaiting approval → 409 TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL. Needs TRANSACT.",
        tags: ["Transactions"],
        params: TransactionIdParams,
        body: RejectIncomingBody,
        response: { 200: Ref("Transaction", "The REJECTED transaction."), ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const res = await clients.quotesFx.rejectIncomingPayment({ platformId, transactionId: request.params.transactionId, reason: request.body?.reason ?? "" });
      return transactionToJson(res.transaction);
    },
  );
}
