import { sql, type Kysely } from "kysely";

// Issue 27 (docs/sca.md): the transaction of a quote that waits for strong customer
// authentication is PENDING_AUTHORIZATION until the quote is authorized (then PENDING), expires
// (EXPIRED) or is cancelled (FAILED). transactions.status has no check constraint to widen; the
// expiry sweep finds these transactions through their own partial index, as it finds PENDING
// quote transactions (20251121100000) and CREATED lookup transactions (20261215100000).
// Transactions stored PENDING for quotes that were waiting before this version stay PENDING: the
// ledger cannot see quotes (another service's schema), and they live at most one quote lifetime
// (docs/sca.md, "Transactions stored before").
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex("transactions_pending_authorization_expiry_idx")
    .on("transactions")
    .columns(["expires_at", "id"])
    .where(sql.ref("status"), "=", "PENDING_AUTHORIZATION")
    .where(sql.ref("quote_id"), "is not", null)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  // A waiting transaction read by the previous version is a PENDING one (it knew no other).
  await db.updateTable("transactions").set({ status: "PENDING" }).where("status", "=", "PENDING_AUTHORIZATION").execute();
  await db.schema.dropIndex("transactions_pending_authorization_expiry_idx").ifExists().execute();
}
