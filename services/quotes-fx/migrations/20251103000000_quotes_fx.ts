import { sql, type Kysely } from "kysely";

// The db handed to migrations already targets the quotes_fx schema (withSchema).

export async function up(db: Kysely<any>): Promise<void> {
  // Receiver lookups: a quote to a UMA destination must name one that has not expired.
  await db.schema
    .createTable("receiver_lookups")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("platform_id", "text", (c) => c.notNull())
    .addColumn("kind", "text", (c) => c.notNull().check(sql`kind in ('UMA', 'EXTERNAL_ACCOUNT')`))
    .addColumn("receiver_uma_address", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("account_id", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("customer_id", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("sender_uma_address", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("sending_currency", "text", (c) => c.notNull())
    // [{currencyCode, estimatedExchangeRate, min, max}] with amounts as strings (jsonb has no int8).
    .addColumn("supported_currencies", "jsonb", (c) => c.notNull())
    .addColumn("required_payer_data_fields", "jsonb", (c) => c.notNull())
    .addColumn("scenario", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("expires_at", "timestamptz", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("receiver_lookups_platform_idx").on("receiver_lookups").columns(["platform_id", "id"]).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("receiver_lookups").execute();
}
