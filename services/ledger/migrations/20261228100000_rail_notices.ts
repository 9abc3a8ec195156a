import { sql, type Kysely } from "kysely";

// Rail notices (rail contract 1.2, docs/connectors.md "Notices"): money the bank received for the
// operator's account (received_credits: credited to the internal account its funding instructions
// name, or kept in suspense for the operator) and the receiving banks' corrections of external
// accounts (account_corrections). Each once per (connector, bank entry id), whatever event ids the
// connector gives it.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("received_credits")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("connector", "text", (c) => c.notNull())
    .addColumn("bank_entry_id", "text", (c) => c.notNull())
    .addColumn("amount", "int8", (c) => c.notNull().check(sql`amount > 0`))
    .addColumn("currency", "text", (c) => c.notNull())
    .addColumn("payment_rail", "text", (c) => c.notNull())
    .addColumn("credited_account", "text", (c) => c.notNull())
    .addColumn("credited_routing", "text", (c) => c.notNull())
    .addColumn("reference", "text", (c) => c.notNull())
    .addColumn("sender_name", "text", (c) => c.notNull())
    .addColumn("sender_account", "text", (c) => c.notNull())
    .addColumn("sender_routing", "text", (c) => c.notNull())
    .addColumn("value_date", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull().check(sql`status in ('SUSPENSE', 'CREDITED', 'RETURN_REQUESTED', 'RETURNED')`))
    .addColumn("suspense_reason", "text", (c) => c.notNull())
    .addColumn("platform_id", "text")
    .addColumn("internal_account_id", "text")
    .addColumn("transaction_id", "text", (c) => c.unique())
    .addColumn("note", "text", (c) => c.notNull())
    .addColumn("received_at", "timestamptz", (c) => c.notNull())
    .addColumn("updated_at", "timestamptz", (c) => c.notNull())
    .addUniqueConstraint("received_credits_entry_key", ["connector", "bank_entry_id"])
    .addCheckConstraint("received_credits_credited", sql`(status = 'CREDITED') = (transaction_id is not null)`)
    .execute();
  await db.schema.createIndex("received_credits_status_idx").on("received_credits").columns(["status", "received_at"]).execute();
  await db.schema
    .createTable("account_corrections")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("connector", "text", (c) => c.notNull())
    .addColumn("bank_entry_id", "text", (c) => c.notNull())
    .addColumn("transaction_id", "text", (c) => c.notNull())
    .addColumn("platform_id", "text")
    .addColumn("external_account_id", "text")
    .addColumn("code", "text", (c) => c.notNull())
    .addColumn("corrected", "jsonb", (c) => c.notNull())
    .addColumn("corrected_data", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull().check(sql`status in ('APPLIED', 'REFUSED')`))
    .addColumn("detail", "text", (c) => c.notNull())
    .addColumn("received_at", "timestamptz", (c) => c.notNull())
    .addUniqueConstraint("account_corrections_entry_key", ["connector", "bank_entry_id"])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("account_corrections").execute();
  await db.schema.dropTable("received_credits").execute();
}
