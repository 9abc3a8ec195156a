import type { Clock } from "@corridor/kit";
import type { Kysely } from "kysely";
import type { AccountRow } from "../data/accounts.js";
import type { LedgerDatabase } from "../data/tables.js";
import type { TransactionRow } from "../data/transactions.js";
import { createAccounts } from "./accounts.js";
import { createCopies } from "./copies.js";
import { createIncoming } from "./incoming.js";
import type { Idempotent } from "./idempotency.js";
import type { AnswerCodec, Directory } from "./ports.js";
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
  db: Kysely<LedgerDatabase>;
  clock: Clock;
  directory: Directory;
  idempotent: Idempotent;
  answers: { transaction: AnswerCodec<TransactionRow>; internalAccount: AnswerCodec<AccountRow> };
}) {
  const { db, clock, directory, idempotent, answers } = deps;
  const quotes = createQuotes({ db, clock, directory });
  return {
    ...createAccounts({ db, clock, directory }),
    ...createCopies({ db, clock }),
    ...createTransfers({ db, clock, directory, idempotent, answers: answers.transaction, quotes }),
    ...createSandboxFunding({ db, clock, directory, idempotent, answers: answers.internalAccount }),
    ...createIncoming({ db, clock, directory, idempotent, answers: answers.transaction }),
    createQuoteTransaction: quotes.createQuoteTransaction,
    expireQuoteTransaction: quotes.expireQuoteTransaction,
    onSandboxClockAdvanced: quotes.onSandboxClockAdvanced,
    executeQuoteTransaction: quotes.executeQuoteTransaction,
    recordQuoteFunding: quotes.recordQuoteFunding,
  };
}

export type Ledger = ReturnType<typeof createLedger>;
