import { createClient, type Client, type Transport } from "@connectrpc/connect";
import { LedgerService } from "@corridor/proto/corridor/ledger/v1/ledger_service_pb.js";
import type { CustomerLedger } from "../domain/ports.js";

/** The ledger's view of a customer's money over Connect (LedgerService.GetCustomerHoldings). */
export function customerLedger(transport: () => Transport): CustomerLedger {
  // Resolved on first use: a service may call another only at request time, never while starting.
  let client: Client<typeof LedgerService> | undefined;
  return {
    async closeIfEmpty(platformId, customerId) {
      client ??= createClient(LedgerService, transport());
      const res = await client.getCustomerHoldings({ platformId, customerId, close: true });
      return {
        accounts: res.accounts.map((a) => ({ accountId: a.accountId, type: a.type, currency: a.currency, balance: a.balance, held: a.held })),
        inFlightTransactions: res.inFlightTransactions.map((t) => ({ transactionId: t.transactionId, type: t.type, status: t.status, amount: t.amount, currency: t.currency, refundStatus: t.refundStatus })),
        closed: res.closed,
      };
    },
  };
}
