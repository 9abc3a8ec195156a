import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { Transaction as LedgerTransaction } from "@corridor/proto/corridor/ledger/v1/transaction_pb.js";
import { LedgerEventSchema } from "@corridor/proto/corridor/ledger/v1/events_pb.js";
import type { Transaction } from "kysely";
import type { ConsumerDefinition } from "./service.js";
import { topics } from "./topics.js";

/** One TransactionChanged of the ledger (its transaction topics), as a consumer of it needs it. */
export interface LedgerTransactionChange {
  eventId: string;
  platformId: string;
  /** The transaction after the change. */
  transaction: LedgerTransaction;
  /** When the ledger recorded the change (undefined if the event carries no time). */
  occurredAt: Date | undefined;
}

/**
 * The consumer of ledger transaction changes that several services need (agents: an agent's
 * transaction; quotes-fx: a quote's). `accepts` picks the transactions this service follows; the
 * host's inbox runs `handle` once per event id inside a transaction of the service's schema.
 */
export function ledgerTransactionConsumer(opts: {
  name: string;
  /** The ledger topics carrying the transactions it follows (the kit's ledgerEventTopic routes them by quote and agent). */
  topics: readonly string[];
  /** ConsumerDefinition.batch: changes that arrive together are handled in one transaction. */
  batch?: boolean;
  accepts(transaction: LedgerTransaction): boolean;
  handle(trx: Transaction<any>, change: LedgerTransactionChange): Promise<void>;
}): ConsumerDefinition<typeof LedgerEventSchema> {
  return {
    name: opts.name,
    batch: opts.batch,
    topic: opts.topics,
    formerTopics: [topics.ledger],
    schema: LedgerEventSchema,
    eventId: (e) => e.eventId,
    relevant: (e) => e.payload.case === "transactionChanged" && !!e.payload.value.transaction && opts.accepts(e.payload.value.transaction),
    async handle(e, trx) {
      if (e.payload.case !== "transactionChanged") return;
      const transaction = e.payload.value.transaction;
      if (!transaction || !opts.accepts(transaction)) return;
      await opts.handle(trx, { eventId: e.eventId, platformId: e.platformId, transaction, occurredAt: e.occurredAt ? timestampDate(e.occurredAt) : undefined });
    },
  };
}
