import { timestampDate } from "@bufbuild/protobuf/wkt";
import { topics, type ConsumerDefinition } from "@corridor/kit";
import { LedgerEventSchema } from "@corridor/proto/corridor/ledger/v1/events_pb.js";
import type { QuoteLifecycle } from "../domain/quote-lifecycle.js";

/**
 * A quote's status follows its ledger transaction: every TransactionChanged of a quote's
 * transaction moves the quote forward (the host's inbox runs this once per event id).
 */
export function ledgerTransactionConsumer(quotes: QuoteLifecycle): ConsumerDefinition<typeof LedgerEventSchema> {
  return {
    name: "quote-transactions",
    topic: topics.ledger,
    schema: LedgerEventSchema,
    eventId: (e) => e.eventId,
    async handle(e, trx) {
      if (e.payload.case !== "transactionChanged") return;
      const t = e.payload.value.transaction;
      if (!t || !t.quoteId) return;
      await quotes.onTransactionChanged(trx, {
        platformId: e.platformId,
        transactionId: t.id,
        status: t.status,
        failureReason: t.failureReason,
        at: e.occurredAt ? timestampDate(e.occurredAt) : new Date(),
      });
    },
  };
}
