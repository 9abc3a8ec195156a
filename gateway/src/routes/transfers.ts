import { principalOf } from "../auth.js";
import { markIdempotentEffectDone } from "../idempotency.js";
import { transactionToJson } from "../mappers/transactions.js";
import { Ref, errorResponses } from "../schemas/common.js";
import { IdempotencyHeaders, TransferBody, TransferOutBody } from "../schemas/transfers.js";
import type { Api, RouteDeps } from "./types.js";

const tags = ["Transfers"];

export function transferRoutes(app: Api, { clients }: RouteDeps): void {
  for (const direction of ["in", "out"] as const) {
    app.post(
      `/transfer-${direction}`,
      {
        config: { permission: "TRANSACT" },
        schema: {
          summary: direction === "in" ? "Pull money from an external account" : "Send money to an external account",
          description:
            direction === "in"
              ? "Pulls from a pull-capable external account (USD_ACCOUNT) into an internal account of the same owner and currency: 201 INCOMING Transaction (PENDING). Other account types answer 400 TRANSFER_IN_NOT_SUPPORTED: deposit with the destination's fundingPaymentInstructions. Honours Idempotency-Key. Needs TRANSACT."
              : "Pushes money from an internal account to an external account of the same owner and currency: 201 OUTGOING Transaction (PENDING), the amount held at once. 400 CURRENCY_MISMATCH, 400 INSUFFICIENT_BALANCE, 403 USER_NOT_READY. Honours Idempotency-Key. Needs TRANSACT.",
          tags,
          headers: IdempotencyHeaders,
          body: direction === "in" ? TransferBody : TransferOutBody,
          response: { 201: Ref("Transaction", "The new transaction."), ...errorResponses },
        },
      },
      async (request, reply) => {
        const { platformId } = principalOf(request);
        const b = request.body;
        const transfer = {
          platformId,
          sourceAccountId: b.source.accountId,
          destinationAccountId: b.destination.accountId,
          amount: BigInt(b.amount),
          idempotencyKey: request.headers["idempotency-key"] ?? "",
          description: b.description ?? "",
          paymentRail: String((b.destination as { paymentRail?: string }).paymentRail ?? ""),
        };
        const res = direction === "in" ? await clients.ledger.transferIn({ transfer }) : await clients.ledger.transferOut({ transfer });
        markIdempotentEffectDone(request);
        if (res.result?.replayed) reply.header("Idempotent-Replayed", "true");
        return reply.code(201).send(transactionToJson(res.result?.transaction));
      },
    );
  }
}
