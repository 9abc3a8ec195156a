import { sql, type Kysely } from "kysely";

// The quote-transaction expiry sweep looks for PENDING quote transactions past expires_at every
// few seconds; this partial index keeps that a small range scan however large the table grows.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex("transactions_pending_quote_expiry_idx")
    .on("transactions")
    .columns(["expires_at", "id"])
    .where(sql.ref("status"), "=", "PENDING")
    .where(sql.ref("quote_id"), "is not", null)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex("transactions_pending_quote_expiry_idx").ifExists().execute();
}
