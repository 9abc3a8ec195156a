import { sql, type Kysely } from "kysely";

// Issue 10: a receiver lookup made for a customer opens an OUTGOING transaction in status CREATED
// (spec: "initial lookup created"), keyed by its lookup_id (one per lookup). It carries no amount
// until a quote adopts it (CREATED -> PENDING, amounts set) or it expires (CREATED -> EXPIRED), so
// the amount check admits 0 for a lookup transaction no quote adopted. The expiry sweep finds due
// CREATED transactions through a partial index, as it finds PENDING quote transactions.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("transactions").addColumn("lookup_id", "text").execute();
  await db.schema
    .createIndex("transactions_lookup_uq")
    .on("transactions")
    .columns(["platform_id", "lookup_id"])
    .unique()
    .where(sql.ref("lookup_id"), "is not", null)
    .execute();
  await db.schema
    .createIndex("transactions_created_lookup_expiry_idx")
    .on("transactions")
    .columns(["expires_at", "id"])
    .where(sql.ref("status"), "=", "CREATED")
    .execute();
  await db.schema.alterTable("transactions").dropConstraint("transactions_amount_check").ifExists().execute();
  await db.schema
    .alterTable("transactions")
    .addCheckConstraint("transactions_amount_check", sql`amount > 0 or (amount = 0 and lookup_id is not null and quote_id is null)`)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.deleteFrom("transactions").where("lookup_id", "is not", null).where("quote_id", "is", null).execute();
  await db.schema.alterTable("transactions").dropConstraint("transactions_amount_check").ifExists().execute();
  await db.schema.alterTable("transactions").addCheckConstraint("transactions_amount_check", sql`amount > 0`).execute();
  await db.schema.dropIndex("transactions_created_lookup_expiry_idx").ifExists().execute();
  await db.schema.dropIndex("transactions_lookup_uq").ifExists().execute();
  await db.schema.alterTable("transactions").dropColumn("lookup_id").execute();
}
