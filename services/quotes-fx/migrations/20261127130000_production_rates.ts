import type { Kysely } from "kysely";

// The db handed to migrations already targets the quotes_fx schema (withSchema).
// Production platforms' rates (docs/fx.md): the latest USD value of each currency with where it came
// from and when the source set it. Written by the feed worker and the operator's pushes; read by
// every production quote and GET /exchange-rates, which refuse a rate older than the configured limit.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("production_rates")
    .addColumn("currency", "text", (c) => c.primaryKey())
    // Decimal text: USD per one major unit (never a float).
    .addColumn("usd_value", "text", (c) => c.notNull())
    .addColumn("source", "text", (c) => c.notNull())
    .addColumn("as_of", "timestamptz", (c) => c.notNull())
    .addColumn("recorded_at", "timestamptz", (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("production_rates").execute();
}
