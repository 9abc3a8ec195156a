import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { createClient, type Client, type Transport } from "@connectrpc/connect";
import { LedgerService } from "@corridor/proto/corridor/ledger/v1/ledger_service_pb.js";
import { toJson } from "@bufbuild/protobuf";
import { TransactionSchema, type Transaction } from "@corridor/proto/corridor/ledger/v1/transaction_pb.js";
import type { QuoteLedgerPort, QuoteTransactionState } from "../domain/ports.js";

const state = (t: Transaction | undefined): QuoteTransactionState => ({ id: t?.id ?? "", status: t?.status ?? "", failureReason: t?.failureReason ?? "" });

/** The ledger's quote transactions behind the domain's port; errors (public ones included) propagate. */
export function quoteLedgerPort(transport: () => Transport): QuoteLedgerPort {
  let client: Client<typeof LedgerService> | undefined;
  const ledger = () => (client ??= createClient(LedgerService, transport()));
  return {
    async createQuoteTransaction(i) {
      const res = await ledger().createQuoteTransaction({
        platformId: i.platformId,
        quoteId: i.quoteId,
        customerId: i.customerId,
        source: i.sourceAccountId ? { type: "INTERNAL_ACCOUNT", accountId: i.sourceAccountId } : { type: "REALTIME_FUNDING", accountId: "" },
        destination: { type: i.destination.kind, accountId: i.destination.accountId, paymentRail: i.destination.paymentRail, umaAddress: i.destination.umaAddress },
        sendingCurrency: i.sendingCurrency,
        totalSendingAmount: i.totalSendingAmount,
        receivingCurrency: i.receivingCurrency,
        totalReceivingAmount: i.totalReceivingAmount,
        feesIncluded: i.feesIncluded,
        exchangeRate: i.exchangeRate,
        rateDetails: i.rateDetails,
        description: i.description,
        counterpartyInformation: i.counterpartyInformation,
        expiresAt: timestampFromDate(i.expiresAt),
        agentId: i.agentId,
        lookupId: i.lookupId,
        awaitingAuthorization: i.awaitingAuthorization,
      });
      return state(res.transaction);
    },
    async authorizeQuoteTransaction(platformId, transactionId) {
      const res = await ledger().authorizeQuoteTransaction({ platformId, transactionId });
      return state(res.transaction);
    },
    async createLookupTransaction(i) {
      const res = await ledger().createLookupTransaction({
        platformId: i.platformId,
        lookupId: i.lookupId,
        customerId: i.customerId,
        destination: { type: i.destination.kind, accountId: i.destination.accountId, paymentRail: "", umaAddress: i.destination.umaAddress },
        sendingCurrency: i.sendingCurrency,
        receivingCurrency: i.receivingCurrency,
        expiresAt: timestampFromDate(i.expiresAt),
      });
      return state(res.transaction);
    },
    async expireQuoteTransaction(platformId, transactionId) {
      const res = await ledger().expireQuoteTransaction({ platformId, transactionId });
      return state(res.transaction);
    },
    async executeQuoteTransaction(platformId, transactionId) {
      const res = await ledger().executeQuoteTransaction({ platformId, transactionId });
      return { ...state(res.transaction), alreadyExecuted: res.alreadyExecuted };
    },
    async recordQuoteFunding(platformId, transactionId, currencyCode, amount) {
      const res = await ledger().recordQuoteFunding({ platformId, transactionId, currencyCode, amount });
      return { ...state(res.transaction), alreadyExecuted: res.alreadyExecuted, snapshot: res.transaction ? toJson(TransactionSchema, res.transaction) : null };
    },
  };
}
