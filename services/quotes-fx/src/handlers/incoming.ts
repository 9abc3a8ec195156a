import type { ServiceImpl } from "@connectrpc/connect";
import { errors } from "@corridor/kit";
import type { Transaction } from "@corridor/proto/corridor/ledger/v1/transaction_pb.js";
import type { QuotesFxService } from "@corridor/proto/corridor/quotes_fx/v1/quotes_fx_service_pb.js";
import type { IncomingPayments } from "../domain/incoming.js";

type IncomingImpl = Pick<ServiceImpl<typeof QuotesFxService>, "receiveUmaPayment" | "approveIncomingPayment" | "rejectIncomingPayment">;

/** Incoming UMA payment RPCs of QuotesFxService: proto ↔ domain only. */
export function createIncomingHandler(incoming: IncomingPayments<Transaction> | undefined): IncomingImpl {
  const use = () => {
    if (!incoming) throw errors.notImplemented("Incoming UMA payments are not wired in this build");
    return incoming;
  };
  return {
    async receiveUmaPayment(req) {
      const r = await use().receive({
        platformId: req.platformId,
        senderUmaAddress: req.senderUmaAddress,
        receiverUmaAddress: req.receiverUmaAddress,
        currency: req.receivingCurrencyCode,
        amount: req.receivingCurrencyAmount,
        idempotencyKey: req.idempotencyKey,
      });
      return { transaction: r.tx, replayed: r.replayed };
    },
    async approveIncomingPayment(req) {
      return { transaction: await use().approve(req.platformId, req.transactionId, req.receiverCustomerInfo as Record<string, unknown> | undefined) };
    },
    async rejectIncomingPayment(req) {
      return { transaction: await use().reject(req.platformId, req.transactionId, req.reason) };
    },
  };
}
