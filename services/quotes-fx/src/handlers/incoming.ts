import { fromJson, toJson, type JsonValue } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { TransactionSchema, type Transaction } from "@corridor/proto/corridor/ledger/v1/transaction_pb.js";
import type { QuotesFxService } from "@corridor/proto/corridor/quotes_fx/v1/quotes_fx_service_pb.js";
import type { IncomingPayments } from "../domain/incoming.js";
import type { Idempotent } from "../domain/ports.js";

type IncomingImpl = Pick<ServiceImpl<typeof QuotesFxService>, "receiveUmaPayment" | "approveIncomingPayment" | "rejectIncomingPayment">;

/** Incoming UMA payment RPCs of QuotesFxService: proto ↔ domain only. */
export function createIncomingHandler(
  incoming: IncomingPayments<Transaction> | undefined,
  answers?: { idempotent: Idempotent; inTransaction: <T>(fn: (trx: unknown) => Promise<T>) => Promise<T> },
): IncomingImpl {
  const use = () => {
    if (!incoming) throw new Error("incoming UMA payments are not wired in this process (a composition-root mistake, not a capability a platform lacks)");
    return incoming;
  };
  return {
    async receiveUmaPayment(req) {
      const run = () =>
        use().receive({
          platformId: req.platformId,
          senderUmaAddress: req.senderUmaAddress,
          receiverUmaAddress: req.receiverUmaAddress,
          customerId: req.customerId,
          currency: req.receivingCurrencyCode,
          amount: req.receivingCurrencyAmount,
          idempotencyKey: req.idempotencyKey,
        });
      if (!answers || !req.idempotencyKey) {
        const r = await run();
        return { transaction: r.tx, replayed: r.replayed };
      }
      // Decisions §3: a replay answers the first response as it was (the payment after its approval
      // exchange), not the payment as it stands now. The ledger's own key still guards the money.
      const r = await answers.idempotent(
        {
          platformId: req.platformId,
          key: req.idempotencyKey,
          request: {
            op: "UMA_RECEIVE",
            sender: req.senderUmaAddress,
            receiver: req.receiverUmaAddress,
            ...(req.customerId ? { customer: req.customerId } : {}),
            currency: req.receivingCurrencyCode,
            amount: req.receivingCurrencyAmount,
          },
          status: 200,
          encode: (tx: Transaction) => toJson(TransactionSchema, tx),
          decode: (json) => fromJson(TransactionSchema, json as JsonValue),
        },
        async (complete) => {
          const first = await run();
          await answers.inTransaction((trx) => complete(trx, first.tx));
          return first.tx;
        },
      );
      return { transaction: r.value, replayed: r.replayed };
    },
    async approveIncomingPayment(req) {
      return { transaction: await use().approve(req.platformId, req.transactionId, req.receiverCustomerInfo as Record<string, unknown> | undefined) };
    },
    async rejectIncomingPayment(req) {
      return { transaction: await use().reject(req.platformId, req.transactionId, req.reason) };
    },
  };
}
