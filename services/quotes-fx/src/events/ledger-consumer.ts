import { ledgerTransactionConsumer as kitLedgerTransactionConsumer, topics, type ConsumerDefinition } from "@corridor/kit";
import type { LedgerEventSchema } from "@corridor/proto/corridor/ledger/v1/events_pb.js";
import { quoteStatusMovedTo, type QuoteLifecycle } from "../domain/quote-lifecycle.js";

/**
 * A quote's status follows its ledger transaction: every TransactionChanged of a quote's
 * transaction moves the quote forward (the kit's ledger-transaction consumer; the host's inbox runs
 * it once per event id).
 */
export function ledgerTransactionConsumer(quotes: QuoteLifecycle): ConsumerDefinition<typeof LedgerEventSchema> {
  return kitLedgerTransactionConsumer({
    name: "quote-transactions",
    // Quote transactions, with an agent or without (the kit's ledgerEventTopic).
    topics: [topics.ledgerQuoteTransactions, topics.ledgerAgentQuoteTransactions],
    // Only quote rows of this schema, one per event: batches are safe.
    batch: true,
    // Checked before the inbox: a change that moves no quote (its PENDING) costs no transaction.
    accepts: (t) => t.quoteId !== "" && quoteStatusMovedTo(t.status) !== undefined,
    handle: (trx, { platformId, transaction: t, occurredAt }) =>
      quotes.onTransactionChanged(trx, { platformId, transactionId: t.id, status: t.status, failureReason: t.failureReason, at: occurredAt ?? new Date() }),
  });
}
