/**
 * What the ledger's domain needs from other services and from storage, as plain TypeScript.
 * Other services are reached over Connect (src/clients/), the event-fed copies and the
 * idempotency keys over Kysely (src/data/); tests pass fakes.
 *
 * The rule the shapes encode: another service is NEVER called while a database transaction is
 * open (in embedded mode every service shares one database session, so such a call would wait for
 * itself). Use cases ask first, then open their money transaction.
 */

import type { IdempotencyKeyRef } from "@corridor/kit";
import type { Posting } from "./journal.js";
import type {
  AccountCorrectionRow,
  AccountRow,
  ReceivedCreditRow,
  CustomerHoldings,
  ExternalAccountRow,
  ExternalAccountScope,
  InternalAccountFilter,
  MicroDepositRow,
  OwnershipChallengeRow,
  NewExternalAccount,
  NewTransaction,
  OpenAccountInput,
  RailBindingRow,
  RailRoute,
  TransactionChange,
  TransactionFilter,
  TransactionRow,
  TrialBalanceRow,
} from "./model.js";

export type Environment = "SANDBOX" | "PRODUCTION";

export interface CustomerFacts {
  platformCustomerId: string;
  verificationStatus: string;
  isDeleted: boolean;
}

/** What the ledger asks other services (auth-sessions, customers-kyc); never inside a DB transaction. */
export interface Directory {
  environment(platformId: string): Promise<Environment>;
  /** Throws NOT_FOUND USER_NOT_FOUND for an unknown or foreign customer. */
  customer(platformId: string, customerId: string): Promise<CustomerFacts>;
  /**
   * The transaction types (OUTGOING, INCOMING) the platform's configuration enables in this
   * currency, read fresh (a configuration change applies at once); undefined when the currency is
   * not in its supported currencies.
   */
  transactionTypes(platformId: string, currency: string): Promise<string[] | undefined>;
}

/** A signed-retry challenge auth-sessions issued (embedded wallets; decisions §6). */
export interface WalletChallenge {
  type: string;
  payloadToSign: string;
  requestId: string;
  expiresAt: Date;
}

/**
 * auth-sessions' signed-retry machinery for the ledger's own signed operations (wallet privacy):
 * a challenge over the canonical body, and the check (and consumption) of a retry, whose refusals
 * (401 UNAUTHORIZED, WALLET_SIGNATURE_BODY_MISMATCH, …) propagate as they are. Never inside a DB transaction.
 */
export interface WalletSignatures {
  challenge(platformId: string, accountId: string, operation: string, body: string): Promise<WalletChallenge>;
  verify(platformId: string, accountId: string, operation: string, retry: { requestId: string; signature: string }, body: string): Promise<void>;
}

/** The ledger's event-fed copies of those facts (src/data/copies.ts); undefined when no event has arrived yet. */
export interface FactCopies {
  environment(platformId: string): Promise<Environment | undefined>;
  customer(platformId: string, customerId: string): Promise<{ platformCustomerId: string; verificationStatus: string | null; isDeleted: boolean } | undefined>;
}

/* ---------- idempotency (decisions §3; the kit's runner and key store) ---------- */

/**
 * How a first answer is stored for replays (the service's public JSON of the resource, written by
 * the handlers' mappers). The domain never sees that encoding; it hands back a stored answer as is.
 */
export interface AnswerCodec<Row> {
  encode(row: Row): unknown;
}

/** A use case's answer under an Idempotency-Key: the fresh row, or the stored answer of the first request. */
export type Answer<Row> = { row: Row; stored?: undefined } | { row?: undefined; stored: unknown };

/* ---------- storage (src/data/store.ts over Kysely; the SQL lives in src/data/) ---------- */

export interface KeysetAfter {
  at: Date;
  id: string;
}

export interface Listed<Row> {
  rows: Row[];
  total: number;
}

/**
 * Statements that run on the schema's database or inside a transaction, whichever handle the
 * store is bound to (LedgerStore: each its own statement; LedgerTx: the transaction's).
 */
export interface LedgerStatements {
  /** Opens the account unless the owner already has one of that type and currency; true when created. */
  openAccount(i: OpenAccountInput): Promise<boolean>;
  /** The system account of a kind for (platform, currency), opened on first use. */
  systemAccountId(platformId: string, currency: string, type: string, now: Date): Promise<string>;
  getAccount(platformId: string, id: string): Promise<AccountRow | undefined>;
  /** Oldest first, keyset on (created_at, id). */
  listAccounts(f: InternalAccountFilter, page: { limit: number; after?: KeysetAfter }): Promise<Listed<AccountRow>>;
  customerAccountOf(platformId: string, customerId: string, currency: string, type: string): Promise<AccountRow | undefined>;

  insertExternalAccount(row: NewExternalAccount): Promise<void>;
  clearDefaultDeposit(platformId: string, customerId: string, now: Date): Promise<void>;
  getExternalAccount(scope: ExternalAccountScope, id: string): Promise<ExternalAccountRow | undefined>;
  findExternalAccount(platformId: string, id: string): Promise<ExternalAccountRow | undefined>;
  /**
   * A transfer's reads in one statement: its internal account, its live external account and the
   * copy of the internal account's customer (FactCopies.customer's answer); nothing when the
   * internal account does not exist.
   */
  transferParties(
    platformId: string,
    internalId: string,
    externalId: string,
  ): Promise<{ internal?: AccountRow; external?: ExternalAccountRow; customerCopy?: Awaited<ReturnType<FactCopies["customer"]>> }>;
  markExternalAccountDeleted(platformId: string, id: string, now: Date): Promise<ExternalAccountRow>;
  /** Newest first, keyset on (created_at, id). */
  listExternalAccounts(f: ExternalAccountScope & { currency?: string }, page: { limit: number; after?: KeysetAfter }): Promise<Listed<ExternalAccountRow>>;
  defaultDepositAccount(platformId: string, customerId: string, currency: string): Promise<ExternalAccountRow | undefined>;

  insertTransaction(row: NewTransaction): Promise<TransactionRow>;
  /** With `forUpdate`, the row is locked (inside a transaction). */
  getTransaction(platformId: string, id: string, forUpdate?: boolean): Promise<TransactionRow | undefined>;
  updateTransaction(platformId: string, id: string, set: TransactionChange): Promise<TransactionRow>;
  /** Inserts a quote transaction unless the platform already has one for the quote (then undefined). */
  insertQuoteTransaction(row: NewTransaction): Promise<TransactionRow | undefined>;
  findQuoteTransaction(platformId: string, quoteId: string): Promise<TransactionRow | undefined>;
  /** Inserts a lookup's CREATED transaction unless the platform already has one for the lookup (then undefined). */
  insertLookupTransaction(row: NewTransaction): Promise<TransactionRow | undefined>;
  findLookupTransaction(platformId: string, lookupId: string): Promise<TransactionRow | undefined>;
  /** Turns a CREATED lookup transaction into its quote's (the columns in `set`); undefined when it is no longer CREATED. */
  adoptLookupTransaction(platformId: string, id: string, set: Partial<NewTransaction>): Promise<TransactionRow | undefined>;
  /** Keyset on (created_at, id) in either direction. */
  listTransactions(f: TransactionFilter, page: { limit: number; ascending: boolean; after?: KeysetAfter }): Promise<Listed<TransactionRow>>;

  recordSandboxOffset(platformId: string, offsetMs: bigint, at: Date): Promise<void>;
  sandboxOffsetMs(platformId: string): Promise<bigint>;
  /** PENDING quote transactions of one platform whose expires_at is at or before `at` (its platform time). */
  dueQuoteTransactionsOf(platformId: string, at: Date, limit: number): Promise<{ platform_id: string; id: string; expires_at: Date | null }[]>;

  trialBalanceRows(platformId?: string): Promise<TrialBalanceRow[]>;
  platformKnown(platformId: string): Promise<boolean>;

  /** The operator's rail bindings of one platform and currency. */
  railBindingsOf(platformId: string, currency: string): Promise<RailBindingRow[]>;
  upsertRailBinding(b: Omit<RailBindingRow, "created_at" | "updated_at">, now: Date): Promise<RailBindingRow>;
  /** False when there was none. */
  deleteRailBinding(platformId: string, currency: string, paymentRail: string): Promise<boolean>;
  listRailBindings(platformId?: string): Promise<RailBindingRow[]>;

  /* rail notices (domain/deposits.ts) */
  /** Inserts the credit unless its (connector, bank entry id) is known; undefined then. */
  insertReceivedCredit(row: ReceivedCreditRow): Promise<ReceivedCreditRow | undefined>;
  getReceivedCredit(id: string, forUpdate?: boolean): Promise<ReceivedCreditRow | undefined>;
  /** The item whose RETURN instruction has this transaction id (locked). */
  receivedCreditByReturn(returnTransactionId: string): Promise<ReceivedCreditRow | undefined>;
  updateReceivedCredit(id: string, set: Partial<Omit<ReceivedCreditRow, "id" | "connector" | "bank_entry_id">>): Promise<ReceivedCreditRow>;
  listReceivedCredits(f: { status?: string; connector?: string; limit: number }): Promise<ReceivedCreditRow[]>;
  /** Notifications of change received (account_corrections), newest first. */
  listAccountCorrections(f: { status?: string; connector?: string; limit: number }): Promise<AccountCorrectionRow[]>;
  accountByReference(reference: string): Promise<AccountRow | undefined>;
  accountById(id: string): Promise<AccountRow | undefined>;
  /** Fiat internal accounts of production platforms in these currencies. */
  productionFiatAccounts(currencies: string[]): Promise<AccountRow[]>;
  setFundingInstructions(id: string, instructions: unknown[], now: Date): Promise<void>;
  platformEnvironment(platformId: string): Promise<Environment | undefined>;
  /** False when its (connector, bank entry id) is known. */
  insertAccountCorrection(row: AccountCorrectionRow): Promise<boolean>;
  updateExternalAccountInfo(platformId: string, id: string, info: Record<string, unknown>, now: Date): Promise<void>;

  /* ownership verification by micro-deposits (domain/ownership.ts) */
  /** Sets an account's wallet privacy (the row as changed). */
  setPrivateEnabled(platformId: string, id: string, value: boolean, now: Date): Promise<AccountRow>;
  insertOwnershipChallenge(row: OwnershipChallengeRow): Promise<void>;
  /** The account's newest challenge; locked with `forUpdate`. */
  latestOwnershipChallenge(platformId: string, externalAccountId: string, forUpdate?: boolean): Promise<OwnershipChallengeRow | undefined>;
  getOwnershipChallenge(id: string, forUpdate?: boolean): Promise<OwnershipChallengeRow | undefined>;
  updateOwnershipChallenge(id: string, set: Partial<Omit<OwnershipChallengeRow, "id" | "created_at">>): Promise<OwnershipChallengeRow>;
  insertMicroDeposit(row: MicroDepositRow): Promise<void>;
  /** The micro-deposit whose rail instruction has this transaction id (locked). */
  microDepositByTransaction(transactionId: string): Promise<MicroDepositRow | undefined>;
  microDepositsOf(challengeId: string): Promise<MicroDepositRow[]>;
  updateMicroDeposit(transactionId: string, set: Partial<Pick<MicroDepositRow, "status" | "reason" | "updated_at">>): Promise<MicroDepositRow>;
  /** Undefined when the account is gone (deleted). */
  setExternalAccountStatus(platformId: string, id: string, status: string, now: Date): Promise<ExternalAccountRow | undefined>;
}

/** A transaction row and its ACTIVE hold (none: undefined), as a batch of rail outcomes reads them. */
export type HeldTransaction = TransactionRow & { hold?: { accountId: string; amount: bigint } };

/** What a batch of rail outcomes writes (LedgerTx.writeOutcomes), all computed on the locked rows. */
export interface OutcomeWrites {
  /** Holds that end: ACTIVE → CAPTURED or RELEASED. */
  holds: { transactionId: string; status: "CAPTURED" | "RELEASED" }[];
  /** Journal entries of captured holds, with their postings. */
  entries: { id: string; platformId: string; transactionId: string; kind: string; postings: { accountId: string; currency: string; amount: bigint }[] }[];
  /** The accounts' new balance and held. */
  accounts: { id: string; balance: bigint; held: bigint }[];
  /** The transactions' outcome columns as they now are. */
  transactions: Pick<TransactionRow, "id" | "status" | "failure_reason" | "failure_detail" | "settled_at" | "expected_settlement_at" | "updated_at">[];
  now: Date;
}

/**
 * Statements inside one database transaction: the row locks (customer gate first, then accounts in
 * lockAccounts' fixed order), the journal, the event-fed copies, the outbox events and the
 * idempotency key's completion, all committing together.
 */
export interface LedgerTx extends LedgerStatements {
  /** Locks the accounts (FOR NO KEY UPDATE, in a fixed order); every one must exist. */
  lockAccounts(platformId: string, ids: string[]): Promise<Map<string, AccountRow>>;
  /* a batch of rail outcomes (src/data/rail-outcomes.ts): each one statement for the whole batch */
  /** Locks the transactions (FOR NO KEY UPDATE, in id order, any platforms) and reads their ACTIVE holds. */
  lockTransactionsWithHolds(ids: string[]): Promise<Map<string, HeldTransaction>>;
  /** Locks the accounts (FOR NO KEY UPDATE, in id order: lockAccounts' order, any platforms); every one must exist. */
  lockAccountsInOrder(ids: string[]): Promise<Map<string, AccountRow>>;
  /** Share-locks the customers' copies (as customerClosed, in id order) and answers which are closed. */
  customersClosed(customerIds: string[]): Promise<Map<string, boolean>>;
  /** Ends holds, posts captured entries, sets balances and transactions' outcome columns, in one statement. */
  writeOutcomes(w: OutcomeWrites): Promise<void>;
  /** The customer gate: NOT_FOUND USER_NOT_FOUND when closed or deleted (share lock on its copy). */
  requireOpenCustomer(platformId: string, customerId: string): Promise<void>;
  /**
   * A transfer's customer gate (the share lock of requireOpenCustomer, not the refusal) and whether
   * its external account is still live, in one statement; undefined when there is no copy of the customer.
   */
  customerGate(platformId: string, customerId: string, externalId: string): Promise<{ open: boolean; externalLive: boolean } | undefined>;
  /** A platform's transfer-out: its source account locked (as lockAccounts) and whether its external account is still live, in one statement. */
  lockSourceCheckingExternal(platformId: string, accountId: string, externalId: string): Promise<{ account: AccountRow; externalLive: boolean }>;
  customerClosed(platformId: string, customerId: string): Promise<boolean>;
  holdingsOf(c: { platformId: string; customerId: string; close: boolean; now: Date }): Promise<CustomerHoldings>;
  upsertPlatformCopy(p: { platformId: string; environment?: string; currencies: string[]; at: Date }): Promise<void>;
  upsertCustomerCopy(c: { platformId: string; customerId: string; platformCustomerId: string; currencies: string[]; isDeleted: boolean; verificationStatus?: string; at: Date }): Promise<{ closed: boolean }>;

  /** One journal entry and the new balances; `locked` (from lockAccounts) is updated in place. */
  postEntry(locked: Map<string, AccountRow>, e: { platformId: string; transactionId?: string; kind: string; postings: Posting[]; now: Date }): Promise<string>;
  placeHold(account: AccountRow, transactionId: string, amount: bigint, now: Date): Promise<AccountRow>;
  /** insertTransaction and placeHold on the (locked) source account for it, in one statement. */
  insertTransactionWithHold(row: NewTransaction, account: AccountRow, amount: bigint, now: Date): Promise<{ tx: TransactionRow; account: AccountRow }>;
  settleHold(platformId: string, locked: Map<string, AccountRow>, transactionId: string, status: "CAPTURED" | "RELEASED", now: Date): Promise<bigint>;
  /* outbox (src/events/ledger-events.ts) */
  emitTransactionChanged(eventType: string, tx: TransactionRow, at: Date): Promise<void>;
  emitBalanceUpdated(account: AccountRow, at: Date): Promise<void>;
  /** The instruction to the connector of `route` (its topic, addressed to it). */
  emitRailInstruction(tx: TransactionRow, external: ExternalAccountRow, route: RailRoute, at: Date): Promise<void>;
  emitQuotePayout(tx: TransactionRow, external: ExternalAccountRow | undefined, route: RailRoute, at: Date): Promise<void>;
  /** A RETURN instruction (contract 1.3) to the connector that reported the credit. */
  emitReturnInstruction(item: ReceivedCreditRow, returnTransactionId: string, at: Date): Promise<void>;
  /** A micro-deposit's instruction (a PAYOUT of kind TRANSFER) to the connector of `route`. */
  emitMicroDeposit(deposit: MicroDepositRow, external: ExternalAccountRow, route: RailRoute, at: Date): Promise<void>;
  /** EXTERNAL_ACCOUNT_UPDATED (a receiving bank corrected the account). */
  emitExternalAccountUpdated(account: ExternalAccountRow, at: Date, why: { code: string; transactionId: string; fields: string[] }): Promise<void>;

  /** Completes a claimed idempotency key with the first answer, in this transaction. */
  completeIdempotencyKey(ref: IdempotencyKeyRef, body: unknown): Promise<void>;

  /**
   * Takes a transaction's rail instruction back out of the outbox if no relay has published or
   * leased it yet (src/data/rail-handoff.ts); false when the hand-off to the bus has begun.
   */
  withdrawRailInstruction(transactionId: string, topic: string): Promise<boolean>;
}

export interface LedgerStore extends LedgerStatements {
  /** Runs `fn` in one database transaction (committed when it resolves, rolled back when it throws). */
  transaction<T>(fn: (tx: LedgerTx) => Promise<T>): Promise<T>;
  /** A LedgerTx over a transaction someone else opened (the host's inbox transaction). */
  within(trx: unknown): LedgerTx;
}
