import { sql, type Insertable, type Kysely, type Selectable, type Updateable } from "kysely";
import type { Db } from "./accounts.js";
import type { LedgerDatabase, TransactionsTable } from "./tables.js";

export type TransactionRow = Selectable<TransactionsTable>;

export async function insertTransaction(db: Db, row: Insertable<TransactionsTable>): Promise<TransactionRow> {
  return db.insertInto("transactions").values(row).returningAll().executeTakeFirstOrThrow();
}

export async function getTransaction(db: Db, platformId: string, id: string, forUpdate = false): Promise<TransactionRow | undefined> {
  let q = db.selectFrom("transactions").selectAll().where("platform_id", "=", platformId).where("id", "=", id);
  // NO KEY UPDATE: a state change never touches the key, and foreign-key checks of rows naming the
  // transaction (FOR KEY SHARE) need not wait for it (see lockAccounts).
  if (forUpdate) q = q.forNoKeyUpdate();
  return q.executeTakeFirst();
}

export async function updateTransaction(
  db: Db,
  platformId: string,
  id: string,
  set: Partial<
    Pick<
      TransactionRow,
      | "status"
      | "failure_reason"
      | "failure_detail"
      | "settled_at"
      | "updated_at"
      | "executed_at"
      | "refund_reference"
      | "refund_status"
      | "refund_reason"
      | "refund_initiated_at"
      | "refund_settled_at"
      | "destination_account_id"
      | "expected_settlement_at"
      | "connector"
      | "payment_rail"
    >
  > & { /** JSON text of a map of strings. */ receiver_customer_info?: string | null },
): Promise<TransactionRow> {
  return db.updateTable("transactions").set(set).where("platform_id", "=", platformId).where("id", "=", id).returningAll().executeTakeFirstOrThrow();
}

/** Inserts a quote transaction unless the platform already has one for the quote (then undefined). */
export async function insertQuoteTransaction(db: Db, row: Insertable<TransactionsTable>): Promise<TransactionRow | undefined> {
  return db
    .insertInto("transactions")
    .values(row)
    .onConflict((oc) => oc.columns(["platform_id", "quote_id"]).where("quote_id", "is not", null).doNothing())
    .returningAll()
    .executeTakeFirst();
}

/** Inserts a lookup's CREATED transaction unless the platform already has one for the lookup (then undefined). */
export async function insertLookupTransaction(db: Db, row: Insertable<TransactionsTable>): Promise<TransactionRow | undefined> {
  return db
    .insertInto("transactions")
    .values(row)
    .onConflict((oc) => oc.columns(["platform_id", "lookup_id"]).where("lookup_id", "is not", null).doNothing())
    .returningAll()
    .executeTakeFirst();
}

export async function findLookupTransaction(db: Db, platformId: string, lookupId: string): Promise<TransactionRow | undefined> {
  return db.selectFrom("transactions").selectAll().where("platform_id", "=", platformId).where("lookup_id", "=", lookupId).executeTakeFirst();
}

/** A quote adopts its lookup's transaction: only while it is still CREATED (else undefined). */
export async function adoptLookupTransaction(db: Db, platformId: string, id: string, set: Updateable<TransactionsTable>): Promise<TransactionRow | undefined> {
  return db
    .updateTable("transactions")
    .set(set)
    .where("platform_id", "=", platformId)
    .where("id", "=", id)
    .where("status", "=", "CREATED")
    .returningAll()
    .executeTakeFirst();
}

export async function findQuoteTransaction(db: Db, platformId: string, quoteId: string): Promise<TransactionRow | undefined> {
  return db.selectFrom("transactions").selectAll().where("platform_id", "=", platformId).where("quote_id", "=", quoteId).executeTakeFirst();
}

export type { TransactionFilter } from "../domain/model.js";
import type { TransactionFilter } from "../domain/model.js";

function filtered(db: Db, f: TransactionFilter) {
  let q = db.selectFrom("transactions").where("platform_id", "=", f.platformId);
  if (f.customerId) q = q.where("customer_id", "=", f.customerId);
  if (f.platformCustomerId) q = q.where("platform_customer_id", "=", f.platformCustomerId);
  if (f.status) q = q.where("status", "=", f.status);
  if (f.type) q = q.where("type", "=", f.type as "INCOMING" | "OUTGOING");
  if (f.createdFrom) q = q.where("created_at", ">=", f.createdFrom);
  if (f.createdTo) q = q.where("created_at", "<=", f.createdTo);
  if (f.reference) q = q.where("reference", "=", f.reference);
  return q;
}

/** Keyset on (created_at, id) in either direction. */
export async function listTransactions(
  db: Db,
  f: TransactionFilter,
  page: { limit: number; ascending: boolean; after?: { at: Date; id: string } },
) {
  let q = filtered(db, f).selectAll();
  if (page.after) {
    const at = page.after.at;
    const id = page.after.id;
    const op = page.ascending ? ">" : "<";
    q = q.where((eb) => eb.or([eb("created_at", op, at), eb.and([eb("created_at", "=", at), eb("id", op, id)])]));
  }
  const dir = page.ascending ? "asc" : "desc";
  const rows = await q.orderBy("created_at", dir).orderBy("id", dir).limit(page.limit + 1).execute();
  const total = await filtered(db, f).select(sql<string>`count(*)`.as("n")).executeTakeFirstOrThrow();
  return { rows, total: Number(total.n) };
}

/**
 * PENDING and PENDING_AUTHORIZATION (outgoing) quote transactions, and CREATED lookup transactions no quote adopted, whose expires_at has passed on their platform's time (`now`
 * plus the platform's sandbox clock offset, 0 for platforms never advanced), oldest first. The one
 * query that spans platforms (the expiry worker's): each row is then expired through the
 * platform-scoped use case.
 */
export async function dueQuoteTransactions(db: Kysely<LedgerDatabase>, now: Date, limit: number, after?: { expiresAt: Date; id: string }) {
  let q = db
    .selectFrom("transactions as t")
    .leftJoin("sandbox_clocks as c", "c.platform_id", "t.platform_id")
    .select(["t.platform_id", "t.id", "t.expires_at"])
    .where("t.type", "=", "OUTGOING")
    .where((eb) => eb.or([eb.and([eb("t.status", "=", "PENDING"), eb("t.quote_id", "is not", null)]), eb.and([eb("t.status", "=", "PENDING_AUTHORIZATION"), eb("t.quote_id", "is not", null)]), eb.and([eb("t.status", "=", "CREATED"), eb("t.lookup_id", "is not", null)])]))
    .where(sql<boolean>`t.expires_at < ${now.toISOString()}::timestamptz + (coalesce(c.offset_ms, 0) * interval '1 millisecond')`);
  if (after) q = q.where((eb) => eb.or([eb("t.expires_at", ">", after.expiresAt), eb.and([eb("t.expires_at", "=", after.expiresAt), eb("t.id", ">", after.id)])]));
  return q.orderBy("t.expires_at").orderBy("t.id").limit(limit).execute();
}
