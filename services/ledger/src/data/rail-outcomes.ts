import { fixedShapeQuery } from "@corridor/kit";
import { sql, type Kysely } from "kysely";
import type { AccountRow } from "./accounts.js";
import type { LedgerDatabase, Trx } from "./tables.js";
import type { HeldTransaction, OutcomeWrites } from "../domain/ports.js";

// The statements of a batch of rail outcomes (domain/transfers.ts, applyRailOutcomes): each locks
// or writes for all the batch's outcomes at once, and every lock is taken in one global order
// (ids sorted, rows locked as they leave the sort), so two appliers of overlapping batches, and a
// transfer-out beside them, never wait on each other in opposite orders.

// Every statement of an outcome is built and compiled once per shape (the kit's fixedShapeQuery):
// the locks per number of ids, the writes per number of rows of each kind (the variant).

/** `n` stand-ins of `ids` (an `in` list of n values). */
const first = (ids: readonly string[], n: number) => Array.from({ length: n }, (_, i) => ids[i]!);

const lockTransactionsQuery = fixedShapeQuery((db: Kysely<LedgerDatabase>, a: { ids: string[] }, n: number) =>
  db
    .selectFrom("transactions")
    .selectAll("transactions")
    .select((eb) => {
      const active = () => eb.selectFrom("holds as h").whereRef("h.transaction_id", "=", "transactions.id").where("h.status", "=", "ACTIVE");
      return [active().select("h.account_id").as("active_hold_account"), active().select("h.amount").as("active_hold_amount")];
    })
    .where("transactions.id", "in", first(a.ids, n))
    .orderBy("transactions.id")
    .forNoKeyUpdate(),
);

const lockAccountsInOrderQuery = fixedShapeQuery((db: Kysely<LedgerDatabase>, a: { ids: string[] }, n: number) =>
  db.selectFrom("accounts").selectAll().where("id", "in", first(a.ids, n)).orderBy("id").forNoKeyUpdate(),
);

const customersClosedQuery = fixedShapeQuery((db: Kysely<LedgerDatabase>, a: { ids: string[] }, n: number) =>
  db.selectFrom("customers").select(["id", "closed_at", "is_deleted"]).where("id", "in", first(a.ids, n)).orderBy("id").forShare(),
);

/**
 * Locks the transactions (FOR NO KEY UPDATE, in id order, one statement; every platform at once: ids are
 * unique) and reads each one's ACTIVE hold with it. A hold changes only under its transaction's
 * lock (outcomes, cancellation), so what is read stays true until the commit.
 */
export async function lockTransactionsWithHolds(trx: Trx, ids: string[]): Promise<Map<string, HeldTransaction>> {
  const wanted = [...new Set(ids)].sort();
  if (wanted.length === 0) return new Map();
  const { rows } = await lockTransactionsQuery.execute(trx, { ids: wanted }, wanted.length);
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
  const { rows } = await lockAccountsInOrderQuery.execute(trx, { ids: wanted }, wanted.length);
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
  const { rows } = await customersClosedQuery.execute(trx, { ids: wanted }, wanted.length);
  const closed = new Map(wanted.map((id) => [id, false]));
  for (const r of rows) closed.set(r.id, !!r.closed_at || r.is_deleted);
  return closed;
}

/** `case <column> when id then value ... end` over `n` rows for an update; `cast` is the column's SQL type. */
function byId(column: string, n: number, id: (i: number) => unknown, value: (i: number) => unknown, cast: string) {
  const arms = Array.from({ length: n }, (_, i) => sql`when ${id(i)} then ${value(i)}::${sql.raw(cast)}`);
  return sql`case ${sql.ref(column)} ${sql.join(arms, sql` `)} end`;
}

/** The shape of a batch's writes: how many holds end, each entry's number of postings, how many accounts and transactions change. */
const shapeOf = (w: OutcomeWrites) => `${w.holds.length}|${w.entries.map((e) => e.postings.length).join(",")}|${w.accounts.length}|${w.transactions.length}`;

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
  const row = (await writeOutcomesQuery.execute(trx, w, shapeOf(w))).rows[0] as { ended?: number | string } | undefined;
  if (w.holds.length > 0 && Number(row?.ended) !== w.holds.length) throw new Error(`${w.holds.length - Number(row?.ended ?? 0)} of the batch's holds were no longer ACTIVE`);
}

const writeOutcomesQuery = fixedShapeQuery((db: Kysely<LedgerDatabase>, w: OutcomeWrites, shape: string) => {
  const [holdCount, postingCounts, accountCount, transactionCount] = shape.split("|") as [string, string, string, string];
  const holds = Number(holdCount);
  const entries = postingCounts === "" ? [] : postingCounts.split(",").map(Number);
  const accounts = Number(accountCount);
  const transactions = Number(transactionCount);
  let q: any = db;
  if (holds > 0) {
    q = q.with("ended", (d: Trx) =>
      d
        .updateTable("holds")
        .set({ status: byId("transaction_id", holds, (i) => w.holds[i]!.transactionId, (i) => w.holds[i]!.status, "text") as never, updated_at: w.now })
        .where("transaction_id", "in", Array.from({ length: holds }, (_, i) => w.holds[i]!.transactionId))
        .where("status", "=", "ACTIVE")
        .returning("transaction_id"),
    );
  }
  if (entries.length > 0) {
    q = q
      .with("entries", (d: Trx) =>
        d.insertInto("journal_entries").values(
          entries.map((_, i) => ({ id: w.entries[i]!.id, platform_id: w.entries[i]!.platformId, transaction_id: w.entries[i]!.transactionId, kind: w.entries[i]!.kind, created_at: w.now })),
        ),
      )
      .with("lines", (d: Trx) =>
        d.insertInto("postings").values(
          entries.flatMap((postings, i) =>
            Array.from({ length: postings }, (_, j) => {
              const e = w.entries[i]!;
              const p = e.postings[j]!;
              return { entry_id: e.id, platform_id: e.platformId, account_id: p.accountId, currency: p.currency, amount: p.amount };
            }),
          ),
        ),
      );
  }
  if (accounts > 0) {
    q = q.with("balances", (d: Trx) =>
      d
        .updateTable("accounts")
        .set({
          balance: byId("id", accounts, (i) => w.accounts[i]!.id, (i) => w.accounts[i]!.balance, "bigint") as never,
          held: byId("id", accounts, (i) => w.accounts[i]!.id, (i) => w.accounts[i]!.held, "bigint") as never,
          updated_at: w.now,
        })
        .where("id", "in", Array.from({ length: accounts }, (_, i) => w.accounts[i]!.id)),
    );
  }
  const t = (i: number) => w.transactions[i]!;
  const update = q
    .updateTable("transactions")
    .set({
      status: byId("id", transactions, (i) => t(i).id, (i) => t(i).status, "text"),
      failure_reason: byId("id", transactions, (i) => t(i).id, (i) => t(i).failure_reason, "text"),
      failure_detail: byId("id", transactions, (i) => t(i).id, (i) => t(i).failure_detail, "text"),
      settled_at: byId("id", transactions, (i) => t(i).id, (i) => t(i).settled_at, "timestamptz"),
      expected_settlement_at: byId("id", transactions, (i) => t(i).id, (i) => t(i).expected_settlement_at, "timestamptz"),
      updated_at: byId("id", transactions, (i) => t(i).id, (i) => t(i).updated_at, "timestamptz"),
    })
    .where("id", "in", Array.from({ length: transactions }, (_, i) => t(i).id));
  return holds > 0 ? update.returning(sql<number>`(select count(*) from ended)`.as("ended")) : update.returning("id");
});
