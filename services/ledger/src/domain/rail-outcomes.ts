import { newId, type Clock } from "@corridor/kit";
import { SANDBOX_CONNECTOR, environmentOf } from "@corridor/connector";
import { applyEntry, type AccountState, type Posting } from "./journal.js";
import { SYSTEM_TYPES, type AccountRow, type TransactionRow } from "./model.js";
import type { LedgerStore, LedgerTx, OutcomeWrites } from "./ports.js";
import type { QuoteOutcomeStatus } from "./quotes.js";
import type { Quotes } from "./quote-transactions.js";
import { FINAL_STATUSES, transitionFor, type RailStatus } from "./transactions.js";

/** A rail connector's outcome for a transaction (corridor.rail-outcomes.v1). */
export interface RailOutcomeInput {
  platformId: string;
  transactionId: string;
  status: RailStatus | QuoteOutcomeStatus;
  reason: string;
  at: Date;
  expectedSettlementAt?: Date;
  /** Who reports it ("" from connectors before contract v1.1: the simulator). */
  connector?: string;
  environment?: string;
}

/** applied (or changed nothing: late, repeated, backwards); not-addressed: from a connector the transaction was not routed to; unknown: no such transaction. */
export type RailOutcomeResult = "applied" | "not-addressed" | "unknown";

const TRANSFER_STATUSES: ReadonlySet<string> = new Set(["PROCESSING", "COMPLETED", "FAILED", "REJECTED", "RETURNED"]);

/**
 * Thrown when a batch needs a lock outside the batch's one order (an account or a customer that
 * was not locked up front): the batch rolls back and the host handles its outcomes one by one
 * (the kit's inbox fallback), each of which then locks what it needs in the usual order.
 */
export class OutcomeBatchOrderError extends Error {
  constructor(what: string) {
    super(`a rail outcome of the batch needs ${what}, which the batch did not lock first; its outcomes are applied one by one`);
    this.name = "OutcomeBatchOrderError";
  }
}

/** A view of some of the batch's locked accounts whose changes write through to all of them. */
class LockedView extends Map<string, AccountRow> {
  constructor(
    private readonly all: Map<string, AccountRow>,
    ids: readonly string[],
  ) {
    super();
    for (const id of ids) {
      const row = all.get(id);
      if (!row) throw new OutcomeBatchOrderError(`account ${id}`);
      super.set(id, row);
    }
  }
  override set(id: string, row: AccountRow): this {
    // Map's constructor calls set before `all` is assigned.
    this.all?.set(id, row);
    return super.set(id, row);
  }
}

const stateOf = (r: AccountRow): AccountState => ({ id: r.id, currency: r.currency, system: r.owner_kind === "SYSTEM", balance: r.balance, held: r.held });

/**
 * Rail outcomes applied together in the caller's (the inbox's) transaction, in their order:
 *
 * 1. the transactions they name, locked in id order with their active holds (one statement);
 * 2. what they will touch, found by running the transitions on those rows in order: the customers
 *    whose closure decides where a returned payout goes (share-locked in id order, one statement,
 *    only when there is one), the system accounts (resolved in one sorted order; known ones cost
 *    nothing), a quote transaction's accounts;
 * 3. all those accounts locked in id order (one statement, whatever the platforms);
 * 4. each outcome decided on the locked rows as one outcome alone would be (the same rules, checks
 *    and events, in order), and the transfers' holds, journal entries, balances and transaction
 *    states written in one statement (a quote transaction's outcome runs its own statements, with
 *    the locks already taken).
 *
 * Every lock is taken before any row changes, each kind in one statement in id order, the kinds in
 * the order every other money path takes them (transaction, customer, accounts), so two appliers
 * of overlapping batches, and transfers beside them, never wait on each other in a cycle. An
 * outcome that would need another lock throws OutcomeBatchOrderError (the host then applies the
 * batch one by one). Outcomes that name no transaction answer "unknown".
 */
export async function applyOutcomeBatch(
  deps: { store: LedgerStore; clock: Clock; quotes: Pick<Quotes, "applyQuoteOutcome" | "outcomeAccounts"> },
  inbox: unknown,
  outcomes: readonly RailOutcomeInput[],
): Promise<RailOutcomeResult[]> {
  const { clock } = deps;
  const trx = deps.store.within(inbox);
  if (outcomes.length === 0) return [];
  const start = clock.now();

  // 1. The transactions, and their active holds.
  const read = await trx.lockTransactionsWithHolds(outcomes.map((o) => o.transactionId));
  const rows = new Map<string, TransactionRow>();
  const holds = new Map<string, { accountId: string; amount: bigint }>();
  for (const [id, r] of read) {
    const { hold, ...row } = r;
    rows.set(id, row);
    if (hold) holds.set(id, hold);
  }
  const rowOf = (o: RailOutcomeInput) => {
    const r = rows.get(o.transactionId);
    return r && r.platform_id === o.platformId ? r : undefined;
  };
  // An outcome that names no transaction is a RETURN instruction's or a micro-deposit's, whose
  // paths lock other rows (a received credit, a challenge and its accounts) in their own order.
  if (outcomes.length > 1 && outcomes.some((o) => !rowOf(o))) throw new OutcomeBatchOrderError("the rows of an outcome that names no transaction");
  // Only the connector the instruction went to speaks for the transaction (rows from before
  // routing went to the simulator): the simulator can never settle a production payment, nor a
  // real connector a sandbox one.
  const addressed = (o: RailOutcomeInput, tx: TransactionRow) => {
    const routed = tx.connector ?? SANDBOX_CONNECTOR;
    return (o.connector || SANDBOX_CONNECTOR) === routed && (!o.environment || o.environment === environmentOf(routed));
  };

  // 2. What the outcomes will touch: the transitions run in order on the rows' statuses.
  const accountIds = new Set<string>();
  const customerIds = new Set<string>();
  const system = new Map<string, { platformId: string; currency: string; type: string }>();
  const systemKey = (tx: TransactionRow, type: string) => `${tx.platform_id}\u0000${tx.currency}\u0000${type}`;
  const needSystem = (tx: TransactionRow, type: string) => system.set(systemKey(tx, type), { platformId: tx.platform_id, currency: tx.currency, type });
  const returnedPayouts: TransactionRow[] = [];
  const quoteRows = new Map<string, TransactionRow>();
  const quoteStatuses = new Map<string, Set<string>>();
  const simulated = new Map<string, string>();
  for (const o of outcomes) {
    const tx = rowOf(o);
    if (!tx || !addressed(o, tx)) continue;
    if (tx.quote_id) {
      quoteRows.set(tx.id, tx);
      quoteStatuses.set(tx.id, (quoteStatuses.get(tx.id) ?? new Set()).add(o.status));
      continue;
    }
    if (!TRANSFER_STATUSES.has(o.status)) continue;
    const t = transitionFor(tx.type, simulated.get(tx.id) ?? tx.status, o.status as RailStatus, o.reason);
    if (!t) continue;
    simulated.set(tx.id, t.to);
    if (t.money === "none") continue;
    accountIds.add(tx.internal_account_id!);
    needSystem(tx, SYSTEM_TYPES.railClearing);
    if (t.money === "reverse-payout" && tx.customer_id) {
      customerIds.add(tx.customer_id);
      returnedPayouts.push(tx);
    } else if (t.money === "reverse-pull") needSystem(tx, SYSTEM_TYPES.returnShortfall);
  }
  // A quote transaction whose outcomes may move money: its accounts, and its customer's copy.
  const quoteAccounts: string[][] = [];
  for (const tx of quoteRows.values()) {
    const statuses = quoteStatuses.get(tx.id)!;
    if ((statuses.has("REFUND_COMPLETED") || statuses.has("REFUNDED")) && tx.customer_id && tx.internal_account_id) customerIds.add(tx.customer_id);
  }
  // Customers before accounts, as every money path locks them.
  const closed = customerIds.size > 0 ? await trx.customersClosed([...customerIds]) : new Map<string, boolean>();
  for (const tx of returnedPayouts) if (closed.get(tx.customer_id!)) needSystem(tx, SYSTEM_TYPES.refundSuspense);
  const systemIds = new Map<string, string>();
  for (const key of [...system.keys()].sort()) {
    const n = system.get(key)!;
    const id = await trx.systemAccountId(n.platformId, n.currency, n.type, start);
    systemIds.set(key, id);
    accountIds.add(id);
  }
  for (const tx of quoteRows.values()) {
    const customerClosed = !!tx.customer_id && !!closed.get(tx.customer_id);
    quoteAccounts.push(await deps.quotes.outcomeAccounts(trx, tx, start, { statuses: quoteStatuses.get(tx.id)!, customerClosed }));
  }
  for (const ids of quoteAccounts) for (const id of ids) accountIds.add(id);

  // 3. Every account, in one order.
  const locked = accountIds.size > 0 ? await trx.lockAccountsInOrder([...accountIds]) : new Map<string, AccountRow>();

  // 4. The outcomes, in order; the transfers' writes gathered into one statement.
  const writes = {
    holds: [] as OutcomeWrites["holds"],
    entries: [] as OutcomeWrites["entries"],
    accounts: new Set<string>(),
    transactions: new Map<string, TransactionRow>(),
  };
  const flush = async () => {
    if (writes.transactions.size === 0) return;
    await trx.writeOutcomes({
      holds: writes.holds,
      entries: writes.entries,
      accounts: [...writes.accounts].map((id) => ({ id, balance: locked.get(id)!.balance, held: locked.get(id)!.held })),
      transactions: [...writes.transactions.values()],
      now: clock.now(),
    });
    writes.holds = [];
    writes.entries = [];
    writes.accounts.clear();
    writes.transactions.clear();
  };
  /** The transaction's new state, written with the batch. */
  const stage = (tx: TransactionRow, set: Partial<TransactionRow>): TransactionRow => {
    const updated = { ...tx, ...set };
    rows.set(tx.id, updated);
    writes.transactions.set(tx.id, updated);
    return updated;
  };
  const setAccount = (row: AccountRow, change: Partial<AccountRow>, now: Date) => {
    locked.set(row.id, { ...row, ...change, updated_at: now });
    writes.accounts.add(row.id);
  };
  /** A journal entry (checked as postEntry checks it), written with the batch. */
  const stageEntry = (tx: TransactionRow, kind: string, postings: Posting[], now: Date, states = new Map(postings.map((p) => [p.accountId, stateOf(lockedRow(p.accountId))]))) => {
    const balances = applyEntry(states, postings);
    for (const [id, balance] of balances) setAccount(lockedRow(id), { balance }, now);
    writes.entries.push({
      id: newId("JournalEntry"),
      platformId: tx.platform_id,
      transactionId: tx.id,
      kind,
      postings: postings.map((p) => ({ accountId: p.accountId, currency: lockedRow(p.accountId).currency, amount: p.amount })),
    });
  };
  const lockedRow = (id: string) => {
    const row = locked.get(id);
    if (!row) throw new OutcomeBatchOrderError(`account ${id}`);
    return row;
  };
  // What a quote transaction's outcome runs on: the batch's locks (a lock outside them throws),
  // its changes to the transaction seen by the outcomes after it.
  const quoteTrx: LedgerTx = {
    ...trx,
    lockAccounts: async (_platformId, ids) => new LockedView(locked, [...new Set(ids)].sort()),
    customerClosed: async (_platformId, customerId) => {
      const c = closed.get(customerId);
      if (c === undefined) throw new OutcomeBatchOrderError(`customer ${customerId}`);
      return c;
    },
    updateTransaction: async (platformId, id, set) => {
      const updated = await trx.updateTransaction(platformId, id, set);
      rows.set(id, updated);
      return updated;
    },
  };

  const results: RailOutcomeResult[] = [];
  for (const o of outcomes) {
    const tx = rowOf(o);
    if (!tx) {
      results.push("unknown");
      continue;
    }
    if (!addressed(o, tx)) {
      results.push("not-addressed");
      continue;
    }
    results.push("applied");
    const now = clock.now();
    // The rail's estimate of the settlement (Transaction.settledAt while in flight), kept while
    // the payment is; written with the status change when there is one.
    const estimate = o.expectedSettlementAt;
    const newEstimate =
      estimate && !FINAL_STATUSES.has(tx.status) && tx.expected_settlement_at?.getTime() !== estimate.getTime() ? { expected_settlement_at: estimate } : undefined;
    if (tx.quote_id) {
      // Its own statements, after what the batch gathered so far.
      await flush();
      const row = newEstimate ? await quoteTrx.updateTransaction(tx.platform_id, tx.id, newEstimate) : tx;
      await deps.quotes.applyQuoteOutcome(quoteTrx, row, { status: o.status as QuoteOutcomeStatus, reason: o.reason, at: o.at });
      continue;
    }
    // REFUND_* and REFUNDED belong to quote payouts only.
    const t = TRANSFER_STATUSES.has(o.status) ? transitionFor(tx.type, tx.status, o.status as RailStatus, o.reason) : undefined;
    if (!t) {
      if (newEstimate) stage(tx, newEstimate);
      continue;
    }
    const outcomeSet = {
      ...newEstimate,
      status: t.to,
      failure_reason: t.failure?.reason ?? null,
      failure_detail: t.failure?.detail || null,
      settled_at: t.to === "COMPLETED" ? o.at : null,
      updated_at: now,
    };
    if (t.money === "none") {
      const updated = stage(tx, outcomeSet);
      if (t.eventType) await trx.emitTransactionChanged(t.eventType, updated, now);
      continue;
    }
    const internalId = tx.internal_account_id!;
    const clearing = systemIds.get(systemKey(tx, SYSTEM_TYPES.railClearing));
    if (!clearing) throw new OutcomeBatchOrderError(`the rail clearing account of ${tx.id}`);
    if (t.money === "capture-hold" || t.money === "release-hold") {
      // The hold's end and, captured, its journal entry. A payout's hold is its amount: the entry's
      // rules are checked on the locked rows first (the capture takes as much from the balance as
      // from the held money); no active hold (settled already): only the transaction changes.
      const capture = t.money === "capture-hold";
      const postings = [
        { accountId: internalId, amount: -tx.amount },
        { accountId: clearing, amount: tx.amount },
      ];
      if (capture) {
        const states = new Map([internalId, clearing].map((id) => lockedRow(id)).map((r) => [r.id, { ...stateOf(r), held: r.id === internalId ? r.held - tx.amount : r.held }]));
        applyEntry(states, postings);
      }
      const hold = holds.get(tx.id);
      if (hold) {
        if (hold.amount !== tx.amount) throw new Error(`the hold of ${tx.id} is ${hold.amount}, not the transaction's ${tx.amount}`);
        if (hold.accountId !== internalId) throw new OutcomeBatchOrderError(`account ${hold.accountId} (the hold of ${tx.id})`);
        holds.delete(tx.id);
        writes.holds.push({ transactionId: tx.id, status: capture ? "CAPTURED" : "RELEASED" });
        const account = lockedRow(internalId);
        setAccount(account, { held: account.held - hold.amount }, now);
        if (capture) {
          const states = new Map([internalId, clearing].map((id) => [id, stateOf(lockedRow(id))]));
          stageEntry(tx, "TRANSFER_OUT", postings, now, states);
        }
      }
      const updated = stage(tx, outcomeSet);
      if (!capture) await trx.emitBalanceUpdated(lockedRow(internalId), now);
      if (t.eventType) await trx.emitTransactionChanged(t.eventType, updated, now);
      continue;
    }
    if (t.money === "credit") {
      stageEntry(tx, "TRANSFER_IN", [
        { accountId: clearing, amount: -tx.amount },
        { accountId: internalId, amount: tx.amount },
      ], now);
      await trx.emitBalanceUpdated(lockedRow(internalId), now);
    } else if (t.money === "reverse-payout") {
      // A completed payout came back: its money returns from rail clearing to the sender or, the
      // customer being closed, to REFUND_SUSPENSE for the operator.
      const suspense = tx.customer_id && closed.get(tx.customer_id) ? systemIds.get(systemKey(tx, SYSTEM_TYPES.refundSuspense)) : undefined;
      if (tx.customer_id && closed.get(tx.customer_id) && !suspense) throw new OutcomeBatchOrderError(`the refund suspense account of ${tx.id}`);
      if (suspense) {
        stageEntry(tx, "TRANSFER_OUT_RETURN_SUSPENSE", [
          { accountId: clearing, amount: -tx.amount },
          { accountId: suspense, amount: tx.amount },
        ], now);
      } else {
        stageEntry(tx, "TRANSFER_OUT_RETURN", [
          { accountId: clearing, amount: -tx.amount },
          { accountId: internalId, amount: tx.amount },
        ], now);
        await trx.emitBalanceUpdated(lockedRow(internalId), now);
      }
    } else {
      // A completed pull was returned: its credit is taken back from the receiving account as far
      // as its available money goes, the rest from RETURN_SHORTFALL (what the platform owes).
      const shortfall = systemIds.get(systemKey(tx, SYSTEM_TYPES.returnShortfall));
      if (!shortfall) throw new OutcomeBatchOrderError(`the return shortfall account of ${tx.id}`);
      const account = lockedRow(internalId);
      const free = account.balance - account.held;
      const fromAccount = free <= 0n ? 0n : free < tx.amount ? free : tx.amount;
      const postings = [{ accountId: clearing, amount: tx.amount }];
      if (fromAccount > 0n) postings.push({ accountId: internalId, amount: -fromAccount });
      if (fromAccount < tx.amount) postings.push({ accountId: shortfall, amount: -(tx.amount - fromAccount) });
      stageEntry(tx, "TRANSFER_IN_RETURN", postings, now);
      await trx.emitBalanceUpdated(lockedRow(internalId), now);
    }
    const updated = stage(tx, outcomeSet);
    if (t.eventType) await trx.emitTransactionChanged(t.eventType, updated, now);
  }
  await flush();
  return results;
}
