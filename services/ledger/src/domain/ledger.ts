import type { Clock } from "@corridor/kit";
import { createAccounts } from "./accounts.js";
import { createCopies } from "./copies.js";
import { createIncoming } from "./incoming.js";
import type { Idempotent } from "./idempotency.js";
import type { AccountRow, TransactionRow } from "./model.js";
import type { AnswerCodec, Directory, LedgerStore } from "./ports.js";
import { createQuotes } from "./quote-transactions.js";
import { createSandboxFunding } from "./sandbox-funding.js";
import { createTransfers } from "./transfers.js";

export { MAX_FUND_AMOUNT, requireTransactionType, type PageInput } from "./gates.js";
export type { TransferInput } from "./transfers.js";
export type { Directory } from "./ports.js";

/**
 * The ledger's use cases, one module per responsibility: accounts (accounts.ts), transfers and
 * their rail outcomes (transfers.ts), sandbox funding (sandbox-funding.ts), quote transactions
 * (quote-transactions.ts), incoming UMA payments (incoming.ts), the event-fed copies and customer
 * holdings (copies.ts). Each takes its I/O as arguments; this only wires them together.
 */
export function createLedger(deps: {
  store: LedgerStore;
  clock: Clock;
  directory: Directory;
  idempotent: Idempotent;
  answers: { transaction: AnswerCodec<TransactionRow>; internalAccount: AnswerCodec<AccountRow> };
}) {
  const { store, clock, directory, idempotent, answers } = deps;
  const quotes = createQuotes({ store, clock, directory });
  return {
    ...createAccounts({ store, clock, directory }),
    ...createCopies({ store, clock }),
    ...createTransfers({ store, clock, directory, idempotent, answers: answers.transaction, quotes }),
    ...createSandboxFunding({ store, clock, directory, idempotent, answers: answers.internalAccount }),
    ...createIncoming({ store, clock, directory, idempotent, answers: answers.transaction }),
    createQuoteTransaction: quotes.createQuoteTransaction,
    createLookupTransaction: quotes.createLookupTransaction,
    expireQuoteTransaction: quotes.expireQuoteTransaction,
    onSandboxClockAdvanced: quotes.onSandboxClockAdvanced,
    executeQuoteTransaction: quotes.executeQuoteTransaction,
    recordQuoteFunding: quotes.recordQuoteFunding,
  };
}

export type Ledger = ReturnType<typeof createLedger>;
