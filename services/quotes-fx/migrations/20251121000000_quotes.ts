import { sql, type Kysely } from "kysely";

// The db handed to migrations already targets the quotes_fx schema (withSchema).

export async function up(db: Kysely<any>): Promise<void> {
  // Quotes: the priced payment, its ledger transaction and where it is in its lifecycle.
  await db.schema
    .createTable("quotes")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("platform_id", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull().check(sql`status in ('PENDING', 'PROCESSING', 'COMPLETED', 'FAILED', 'EXPIRED')`))
    .addColumn("transaction_id", "text", (c) => c.notNull())
    .addColumn("source_type", "text", (c) => c.notNull())
    .addColumn("source_account_id", "text", (c) => c.notNull())
    .addColumn("customer_id", "text", (c) => c.notNull())
    .addColumn("destination_type", "text", (c) => c.notNull())
    .addColumn("destination_account_id", "text", (c) => c.notNull())
    .addColumn("payment_rail", "text", (c) => c.notNull())
    .addColumn("uma_address", "text", (c) => c.notNull())
    .addColumn("sending_currency", "text", (c) => c.notNull())
    .addColumn("receiving_currency", "text", (c) => c.notNull())
    .addColumn("total_sending_amount", "int8", (c) => c.notNull())
    .addColumn("total_receiving_amount", "int8", (c) => c.notNull())
    .addColumn("fees_included", "int8", (c) => c.notNull())
    .addColumn("exchange_rate", "text", (c) => c.notNull())
    .addColumn("locked_currency_side", "text", (c) => c.notNull())
    .addColumn("locked_currency_amount", "int8", (c) => c.notNull())
    .addColumn("lookup_id", "text", (c) => c.notNull())
    .addColumn("description", "text", (c) => c.notNull())
    .addColumn("purpose_of_payment", "text", (c) => c.notNull())
    // Amount-bearing jsonb holds decimal strings (jsonb has no int8).
    .addColumn("rate_details", "jsonb", (c) => c.notNull())
    .addColumn("counterparty_information", "jsonb", (c) => c.notNull())
    .addColumn("sender_customer_info", "jsonb", (c) => c.notNull())
    .addColumn("payment_instructions", "jsonb", (c) => c.notNull())
    .addColumn("payload_to_sign", "text", (c) => c.notNull())
    .addColumn("signature_request_id", "text", (c) => c.notNull())
    .addColumn("signature_verified", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("failure_reason", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("execution_started_at", "timestamptz")
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("updated_at", "timestamptz", (c) => c.notNull())
    .addColumn("expires_at", "timestamptz", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("quotes_platform_idx").on("quotes").columns(["platform_id", "id"]).execute();
  await db.schema.createIndex("quotes_transaction_idx").on("quotes").columns(["platform_id", "transaction_id"]).execute();
  // The expiry worker's scan: PENDING quotes by expiry.
  await db.schema.createIndex("quotes_pending_expiry_idx").on("quotes").column("expires_at").where(sql.ref("status"), "=", "PENDING").execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("quotes").execute();
}
