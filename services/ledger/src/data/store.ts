import { afterCommit, inTransaction, type IdempotencyKeyRef } from "@corridor/kit";
import type { Kysely, Transaction } from "kysely";
import type { AccountRow, ExternalAccountRow, MicroDepositRow, ReceivedCreditRow, TransactionRow } from "../domain/model.js";
import type { RailRoute } from "../domain/rails.js";
import type { LedgerStatements, LedgerStore, LedgerTx } from "../domain/ports.js";
import * as accounts from "./accounts.js";
import * as copies from "./copies.js";
import * as customers from "./customers.js";
import * as externalAccounts from "./external-accounts.js";
import { completeKey } from "./idempotency.js";
import * as journal from "./journal.js";
import * as notices from "./notices.js";
import * as ownership from "./ownership.js";
import * as railBindings from "./rail-bindings.js";
import * as railOutcomes from "./rail-outcomes.js";
import { withdrawRailInstruction } from "./rail-handoff.js";
import * as sandboxClocks from "./sandbox-clocks.js";
import type { Db, LedgerDatabase, Trx } from "./tables.js";
import * as transactions from "./transactions.js";
import * as transfers from "./transfers.js";
import * as trialBalance from "./trial-balance.js";

/** The outbox writers of the ledger's events (src/events/ledger-events.ts), in the caller's transaction. */
export interface LedgerEventWriters {
  emitTransactionChanged(trx: Transaction<any>, eventType: string, tx: TransactionRow, at: Date): Promise<void>;
  emitBalanceUpdated(trx: Transaction<any>, account: AccountRow, at: Date): Promise<void>;
  emitRailInstruction(trx: Transaction<any>, tx: TransactionRow, external: ExternalAccountRow, route: RailRoute, at: Date): Promise<void>;
  emitQuotePayout(trx: Transaction<any>, tx: TransactionRow, external: ExternalAccountRow | undefined, route: RailRoute, at: Date): Promise<void>;
  emitExternalAccountUpdated(trx: Transaction<any>, account: ExternalAccountRow, at: Date, why: { code: string; transactionId: string; fields: string[] }): Promise<void>;
  emitReturnInstruction(trx: Transaction<any>, item: ReceivedCreditRow, returnTransactionId: string, at: Date): Promise<void>;
  emitMicroDeposit(trx: Transaction<any>, deposit: MicroDepositRow, external: ExternalAccountRow, route: RailRoute, at: Date): Promise<void>;
}

/**
 * System accounts' ids by (platform, currency, type). A system account is opened once and never
 * closed or deleted, so its id is remembered for the store's life — but only once the row is
 * durable: found outside a transaction, or after the commit of the transaction that read or
 * opened it (a rolled-back opening must not leave an id behind).
 */
function systemAccountIds() {
  const known = new Map<string, string>();
  return async (db: Db, platformId: string, currency: string, type: string, now: Date): Promise<string> => {
    const key = `${platformId}\u0000${currency}\u0000${type}`;
    const cached = known.get(key);
    if (cached) return cached;
    const id = await accounts.systemAccountId(db, platformId, currency, type, now);
    if (!db.isTransaction) known.set(key, id);
    else afterCommit(db, () => known.set(key, id));
    return id;
  };
}

/** The statements of both handles, bound to the database or to one transaction. */
function statements(db: Db, systemAccountId: ReturnType<typeof systemAccountIds>): LedgerStatements {
  return {
    openAccount: (i) => accounts.openAccount(db, i),
    systemAccountId: (p, currency, type, now) => systemAccountId(db, p, currency, type, now),
    getAccount: (p, id) => accounts.getAccount(db, p, id),
    listAccounts: (f, page) => accounts.listAccounts(db, f, page),
    customerAccountOf: (p, c, currency, type) => accounts.customerAccountOf(db, p, c, currency, type),

    insertExternalAccount: (row) => externalAccounts.insertExternalAccount(db, row),
    clearDefaultDeposit: (p, c, now) => externalAccounts.clearDefaultDeposit(db, p, c, now),
    getExternalAccount: (scope, id) => externalAccounts.getExternalAccount(db, scope, id),
    findExternalAccount: (p, id) => externalAccounts.findExternalAccount(db, p, id),
    transferParties: (p, internalId, externalId) => transfers.transferParties(db, p, internalId, externalId),
    markExternalAccountDeleted: (p, id, now) => externalAccounts.markExternalAccountDeleted(db, p, id, now),
    listExternalAccounts: (f, page) => externalAccounts.listExternalAccounts(db, f, page),
    defaultDepositAccount: (p, c, currency) => externalAccounts.defaultDepositAccount(db, p, c, currency),

    insertTransaction: (row) => transactions.insertTransaction(db, row),
    getTransaction: (p, id, forUpdate) => transactions.getTransaction(db, p, id, forUpdate),
    updateTransaction: (p, id, set) => transactions.updateTransaction(db, p, id, set),
    insertQuoteTransaction: (row) => transactions.insertQuoteTransaction(db, row),
    findQuoteTransaction: (p, q) => transactions.findQuoteTransaction(db, p, q),
    insertLookupTransaction: (row) => transactions.insertLookupTransaction(db, row),
    findLookupTransaction: (p, l) => transactions.findLookupTransaction(db, p, l),
    adoptLookupTransaction: (p, id, set) => transactions.adoptLookupTransaction(db, p, id, set),
    listTransactions: (f, page) => transactions.listTransactions(db, f, page),

    recordSandboxOffset: (p, offsetMs, at) => sandboxClocks.recordSandboxOffset(db, p, offsetMs, at),
    sandboxOffsetMs: (p) => sandboxClocks.sandboxOffsetMs(db, p),
    dueQuoteTransactionsOf: (p, at, limit) => sandboxClocks.dueQuoteTransactionsOf(db, p, at, limit),

    trialBalanceRows: (p) => trialBalance.trialBalanceRows(db, p),
    platformKnown: (p) => trialBalance.platformKnown(db, p),

    railBindingsOf: (p, currency) => railBindings.railBindingsOf(db, p, currency),
    upsertRailBinding: (b, now) => railBindings.upsertRailBinding(db, b, now),
    deleteRailBinding: (p, currency, rail) => railBindings.deleteRailBinding(db, p, currency, rail),
    listRailBindings: (p) => railBindings.listRailBindings(db, p),

    insertReceivedCredit: (row) => notices.insertReceivedCredit(db, row),
    getReceivedCredit: (id, forUpdate) => notices.getReceivedCredit(db, id, forUpdate),
    receivedCreditByReturn: (returnTransactionId) => notices.receivedCreditByReturn(db, returnTransactionId),
    updateReceivedCredit: (id, set) => notices.updateReceivedCredit(db, id, set),
    listReceivedCredits: (f) => notices.listReceivedCredits(db, f),
    listAccountCorrections: (f) => notices.listAccountCorrections(db, f),
    accountByReference: (ref) => notices.accountByReference(db, ref),
    accountById: (id) => notices.accountById(db, id),
    productionFiatAccounts: (currencies) => notices.productionFiatAccounts(db, currencies),
    setFundingInstructions: (id, instructions, now) => notices.setFundingInstructions(db, id, instructions, now),
    platformEnvironment: (p) => notices.platformEnvironment(db, p),
    insertAccountCorrection: (row) => notices.insertAccountCorrection(db, row),
    updateExternalAccountInfo: (p, id, info, now) => notices.updateExternalAccountInfo(db, p, id, info, now),

    setPrivateEnabled: (p, id, value, now) => accounts.setPrivateEnabled(db, p, id, value, now),
    insertOwnershipChallenge: (row) => ownership.insertOwnershipChallenge(db, row),
    latestOwnershipChallenge: (p, id, forUpdate) => ownership.latestOwnershipChallenge(db, p, id, forUpdate),
    getOwnershipChallenge: (id, forUpdate) => ownership.getOwnershipChallenge(db, id, forUpdate),
    updateOwnershipChallenge: (id, set) => ownership.updateOwnershipChallenge(db, id, set),
    insertMicroDeposit: (row) => ownership.insertMicroDeposit(db, row),
    microDepositByTransaction: (id) => ownership.microDepositByTransaction(db, id),
    microDepositsOf: (id) => ownership.microDepositsOf(db, id),
    updateMicroDeposit: (id, set) => ownership.updateMicroDeposit(db, id, set),
    setExternalAccountStatus: (p, id, status, now) => ownership.setExternalAccountStatus(db, p, id, status, now),
  };
}

/**
 * The domain's LedgerStore over Kysely: statements on the schema's database, and LedgerTx
 * statements bound to one transaction. The repositories do the SQL; this only wires them.
 */
export function createStore(db: Kysely<LedgerDatabase>, events: LedgerEventWriters): LedgerStore {
  const systemAccountId = systemAccountIds();
  const bind = (trx: Trx): LedgerTx => ({
    ...statements(trx, systemAccountId),
    lockAccounts: (p, ids) => accounts.lockAccounts(trx, p, ids),
    lockTransactionsWithHolds: (ids) => railOutcomes.lockTransactionsWithHolds(trx, ids),
    lockAccountsInOrder: (ids) => railOutcomes.lockAccountsInOrder(trx, ids),
    customersClosed: (ids) => railOutcomes.customersClosed(trx, ids),
    writeOutcomes: (w) => railOutcomes.writeOutcomes(trx, w),
    requireOpenCustomer: (p, c) => customers.requireOpenCustomer(trx, p, c),
    customerGate: (p, c, externalId) => transfers.customerGate(trx, p, c, externalId),
    lockSourceCheckingExternal: (p, accountId, externalId) => transfers.lockSourceCheckingExternal(trx, p, accountId, externalId),
    customerClosed: (p, c) => customers.customerClosed(trx, p, c),
    holdingsOf: (c) => customers.holdingsOf(trx, c),
    upsertPlatformCopy: (p) => copies.upsertPlatformCopy(trx, p),
    upsertCustomerCopy: (c) => copies.upsertCustomerCopy(trx, c),
    postEntry: (locked, e) => journal.postEntry(trx, locked, e),
    placeHold: (account, transactionId, amount, now) => journal.placeHold(trx, account, transactionId, amount, now),
    insertTransactionWithHold: (row, account, amount, now) => transfers.insertTransactionWithHold(trx, row, account, amount, now),
    settleHold: (p, locked, transactionId, status, now) => journal.settleHold(trx, p, locked, transactionId, status, now),
    emitTransactionChanged: (eventType, tx, at) => events.emitTransactionChanged(trx, eventType, tx, at),
    emitBalanceUpdated: (account, at) => events.emitBalanceUpdated(trx, account, at),
    emitRailInstruction: (tx, external, route, at) => events.emitRailInstruction(trx, tx, external, route, at),
    emitQuotePayout: (tx, external, route, at) => events.emitQuotePayout(trx, tx, external, route, at),
    emitReturnInstruction: (item, returnTransactionId, at) => events.emitReturnInstruction(trx, item, returnTransactionId, at),
    emitMicroDeposit: (deposit, external, route, at) => events.emitMicroDeposit(trx, deposit, external, route, at),
    emitExternalAccountUpdated: (account, at, why) => events.emitExternalAccountUpdated(trx, account, at, why),
    completeIdempotencyKey: (ref: IdempotencyKeyRef, body) => completeKey(trx, ref, body),
    withdrawRailInstruction: (transactionId, topic) => withdrawRailInstruction(trx, transactionId, topic),
  });

  return {
    ...statements(db, systemAccountId),
    transaction: (fn) => inTransaction(db, (trx) => fn(bind(trx))),
    within: (trx) => bind(trx as Trx),
  };
}
