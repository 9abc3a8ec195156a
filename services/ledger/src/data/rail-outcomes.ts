import { sql } from "kysely";
import type { AccountRow } from "./accounts.js";
import type { Trx } from "./tables.js";
import type { HeldTransaction, OutcomeWrites } from "../domain/ports.js";

// The statements of a batch of rail outcomes (domain/transfers.ts, applyRailOutcomes): each locks
// or writes for all the batch's outcomes at once, and every lock is taken in one global order
// (ids sorted, rows locked as they leave the sort), so two appliers of overlapping batches, and a
// transfer-out beside them, never wait on each other in opposite orders.

/**
 * Locks the transactions (FOR NO KEY UPDATE, in id order, one statement; every platform at once: ids are
 * unique) and reads each one's ACTIVE hold with it. A hold changes only under its transaction's
 * lock (outcomes, cancellation), so what is read stays true until the commit.
 */
export async function lockTransactionsWithHolds(trx: Trx, ids: string[]): Promise<Map<string, HeldTransaction>> {
  const wanted = [...new Set(ids)].sort();
  if (wanted.length === 0) return new Map();
  const rows = await trx
    .selectFrom("transactions")
    .selectAll("transactions")
    .select((eb) => {
      const active = () => eb.selectFrom("holds as h").whereRef("h.transaction_id", "=", "transactions.id").where("h.status", "=", "ACTIVE");
      return [active().select("h.account_id").as("active_hold_account"), active().select("h.amount").as("active_hold_amount")];
    })
    .where("transactions.id", "in", wanted)
    .orderBy("transactions.id")
    .forNoKeyUpdate()
    .execute();
  const out = new Map<string, HeldTransaction>();
  for (const r of rows) {
    const { active_hold_account, active_hold_amount, ...tx } = r as typeof r & { active_hold_account: string | null; active_hold_amount: string | bigint | null };
    out.set(tx.id, active_hold_account === null || active_hold_amount === null ? tx : { ...tx, hold: { accountId: active_hold_account, amount: BigInt(active_hold_amount) } });
  }
  return out;
}

/**
 * Locks the accounts (FOR NO KEY UPDATE, in id order, one statement), whatever their platforms: the order
 * lockAccounts keeps within one platform, so both kinds of lockers agree. Every one must exist.
 */
export async function lockAccountsInOrder(trx: Trx, ids: string[]): Promise<Map<string, AccountRow>> {
  const wanted = [...new Set(ids)].sort();
  if (wanted.length === 0) return new Map();
  const rows = await trx.selectFrom("accounts").selectAll().where("id", "in", wanted).orderBy("id").forNoKeyUpdate().execute();
  const out = new Map(rows.map((r) => [r.id, r]));
  for (const id of wanted) if (!out.has(id)) throw new Error(`account ${id} vanished`);
  return out;
}

/**
 * Share-locks the ledger's copies of these customers (as customerClosed does, in id order, one
 * statement) and answers which are closed (being deleted, or deleted). A customer the ledger has
 * no copy of is not closed.
 */
export async function customersClosed(trx: Trx, ids: string[]): Promise<Map<string, boolean>> {
  const wanted = [...new Set(ids)].sort();
  if (wanted.length === 0) return new Map();
  const rows = await trx.selectFrom("customers").select(["id", "closed_at", "is_deleted"]).where("id", "in", wanted).orderBy("id").forShare().execute();
  const closed = new Map(wanted.map((id) => [id, false]));
  for (const r of rows) closed.set(r.id, !!r.closed_at || r.is_deleted);
  return closed;
}

/** `case <column> when id then value ... end` for an update; `cast` is the column's SQL type. */
function byId<T>(column: string, rows: readonly T[], id: (r: T) => string, value: (r: T) => unknown, cast: string) {
  const arms = rows.map((r) => sql`when ${id(r)} then ${value(r)}::${sql.raw(cast)}`);
  return sql`case ${sql.ref(column)} ${sql.join(arms, sql` `)} end`;
}

/**
 * Everything a batch of outcomes changes, in one statement (data-modifying CTEs): the holds that
 * end, the journal entries and postings of the captured ones, the accounts' new balances and the
 * transactions' new state. The accounts must have been locked (lockAccountsInOrder) and the
 * transactions with their holds (lockTransactionsWithHolds); throws when a hold to end is no
 * longer ACTIVE (the batch then rolls back).
 */
export async function writeOutcomes(trx: Trx, w: OutcomeWrites): Promise<void> {
  if (w.transactions.length === 0) {
    if (w.holds.length || w.entries.length || w.accounts.length) throw new Error("outcome writes without a transaction change");
    return;
  }
  let q: any = trx;
  if (w.holds.length > 0) {
    q = q.with("ended", (db: Trx) =>
      db
        .updateTable("holds")
        .set({ status: byId("transaction_id", w.holds, (h) => h.transactionId, (h) => h.status, "text") as never, updated_at: w.now })
        .where("transaction_id", "in", w.holds.map((h) => h.transactionId))
        .where("status", "=", "ACTIVE")
        .returning("transaction_id"),
    );
  }
  if (w.entries.length > 0) {
    q = q
      .with("entries", (db: Trx) =>
        db.insertInto("journal_entries").values(w.entries.map((e) => ({ id: e.id, platform_id: e.platformId, transaction_id: e.transactionId, kind: e.kind, created_at: w.now }))),
      )
      .with("lines", (db: Trx) =>
        db
          .insertInto("postings")
          .values(w.entries.flatMap((e) => e.postings.map((p) => ({ entry_id: e.id, platform_id: e.platformId, account_id: p.accountId, currency: p.currency, amount: p.amount })))),
      );
  }
  if (w.accounts.length > 0) {
    q = q.with("balances", (db: Trx) =>
      db
        .updateTable("accounts")
        .set({
          balance: byId("id", w.accounts, (a) => a.id, (a) => a.balance, "bigint") as never,
          held: byId("id", w.accounts, (a) => a.id, (a) => a.held, "bigint") as never,
          updated_at: w.now,
        })
        .where("id", "in", w.accounts.map((a) => a.id)),
    );
  }
  const t = w.transactions;
  const update = q
    .updateTable("transactions")
    .set({
      status: byId("id", t, (r) => r.id, (r) => r.status, "text"),
      failure_reason: byId("id", t, (r) => r.id, (r) => r.failure_reason, "text"),
      failure_detail: byId("id", t, (r) => r.id, (r) => r.failure_detail, "text"),
      settled_at: byId("id", t, (r) => r.id, (r) => r.settled_at, "timestamptz"),
      expected_settlement_at: byId("id", t, (r) => r.id, (r) => r.expected_settlement_at, "timestamptz"),
      updated_at: byId("id", t, (r) => r.id, (r) => r.updated_at, "timestamptz"),
    })
    .where("id", "in", t.map((r) => r.id));
  const row = (await (w.holds.length > 0 ? update.returning(sql<number>`(select count(*) from ended)`.as("ended")) : update.returning("id")).executeTakeFirst()) as { ended?: number | string } | undefined;
  if (w.holds.length > 0 && Number(row?.ended) !== w.holds.length) throw new Error(`${w.holds.length - Number(row?.ended ?? 0)} of the batch's holds were no longer ACTIVE`);
}
