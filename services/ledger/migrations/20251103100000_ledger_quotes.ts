import { sql, type Kysely } from "kysely";

// Quote transactions (issue 5): an OUTGOING transaction created from a quote carries what was sent,
// the rate, the fees and, when its payout fails, the refund. A real-time-funded quote has no internal
// source account and a UMA destination no external account, hence the dropped NOT NULLs.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("transactions")
    .alterColumn("internal_account_id", (c) => c.dropNotNull())
    .execute();
  await db.schema
    .alterTable("transactions")
    .alterColumn("external_account_id", (c) => c.dropNotNull())
    .execute();
  await db.schema
    .alterTable("transactions")
    // ACCOUNT (transfers, internal quote sources) or REALTIME_FUNDING.
    .addColumn("source_type", "text", (c) => c.notNull().defaultTo("ACCOUNT"))
    // ACCOUNT (external accounts) or UMA_ADDRESS.
    .addColumn("destination_type", "text", (c) => c.notNull().defaultTo("ACCOUNT"))
    .addColumn("payment_rail", "text")
    .addColumn("uma_address", "text")
    .addColumn("quote_id", "text")
    .addColumn("sent_amount", "int8")
    .addColumn("sent_currency", "text")
    .addColumn("fees", "int8", (c) => c.check(sql`fees >= 0`))
    .addColumn("exchange_rate", "text")
    .addColumn("rate_details", "jsonb")
    .addColumn("counterparty_information", "jsonb")
    .addColumn("expires_at", "timestamptz")
    .addColumn("executed_at", "timestamptz")
    .addColumn("refund_reference", "text")
    .addColumn("refund_status", "text", (c) => c.check(sql`refund_status in ('PENDING', 'COMPLETED', 'FAILED')`))
    .addColumn("refund_reason", "text")
    .addColumn("refund_initiated_at", "timestamptz")
    .addColumn("refund_settled_at", "timestamptz")
    .execute();
  // One transaction per quote: a retried CreateQuoteTransaction finds the first.
  await db.schema
    .createIndex("transactions_quote_uq")
    .on("transactions")
    .columns(["platform_id", "quote_id"])
    .unique()
    .where(sql.ref("quote_id"), "is not", null)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex("transactions_quote_uq").execute();
  for (const c of [
    "source_type",
    "destination_type",
    "payment_rail",
    "uma_address",
    "quote_id",
    "sent_amount",
    "sent_currency",
    "fees",
    "exchange_rate",
    "rate_details",
    "counterparty_information",
    "expires_at",
    "executed_at",
    "refund_reference",
    "refund_status",
    "refund_reason",
    "refund_initiated_at",
    "refund_settled_at",
  ]) {
    await db.schema.alterTable("transactions").dropColumn(c).execute();
  }
}
