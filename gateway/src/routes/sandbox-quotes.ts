import { errors } from "@corridor/kit";
import { principalOf } from "../auth.js";
import { markIdempotentEffectDone } from "../idempotency.js";
import { transactionToJson } from "../mappers/transactions.js";
import { Ref, errorResponses } from "../schemas/common.js";
import { SandboxSendBody } from "../schemas/quotes-fx.js";
import { IdempotencyHeaders } from "../schemas/transfers.js";
import type { Api, RouteDeps } from "./types.js";

/** POST /sandbox/send: simulates paying a REALTIME_FUNDING quote's instructions. */
export function sandboxQuoteRoutes(app: Api, { clients }: RouteDeps): void {
  app.post(
    "/sandbox/send",
    {
      config: { permission: "TRANSACT", sandboxOnly: true },
      schema: {
        summary: "Pay a real-time-funding quote (sandbox)",
        description:
          "Simulates the payment of a REALTIME_FUNDING quote's paymentInstructions: the quote proceeds (the ledger credits and executes it) and the answer is its Transaction. 400 CURRENCY_MISMATCH when currencyCode is not the quote's sending currency, 400 AMOUNT_MISMATCH when currencyAmount (optional, default the quote's totalSendingAmount; `amount` is accepted as the same field) differs, 400 INVALID_INPUT for a quote with another source, 409 INVALID_STATE_TRANSITION / QUOTE_EXPIRED. Honours Idempotency-Key. Sandbox platforms only (403). Needs TRANSACT.",
        tags: ["Sandbox"],
        headers: IdempotencyHeaders,
        body: SandboxSendBody,
        response: { 200: Ref("Transaction", "The quote's transaction after the payment."), ...errorResponses },
      },
    },
    async (request, reply) => {
      const { platformId } = principalOf(request);
      const b = request.body;
      if (b.currencyAmount !== undefined && b.amount !== undefined && b.currencyAmount !== b.amount) {
        throw errors.invalidInput([{ field: "body.amount", reason: "must equal currencyAmount when both are given" }]);
      }
      const paid = b.currencyAmount ?? b.amount;
      const res = await clients.quotesFx.sendSandboxFunding({
        platformId,
        quoteId: b.quoteId,
        currencyCode: b.currencyCode,
        amount: paid === undefined ? 0n : BigInt(paid),
        idempotencyKey: request.headers["idempotency-key"] ?? "",
      });
      // The payment is recorded: a failure of the read below must not free the key.
      markIdempotentEffectDone(request);
      if (res.replayed) reply.header("Idempotent-Replayed", "true");
      // quotes-fx answers the transaction as the ledger answered the payment (kept with the key, so
      // a replay shows the first answer); a quotes-fx without that field is read through the ledger.
      const tx = res.transaction ?? (await clients.ledger.getTransaction({ platformId, transactionId: res.transactionId })).transaction;
      return transactionToJson(tx);
    },
  );
}
