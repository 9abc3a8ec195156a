import type { Kysely } from "kysely";

/**
 * The package's table for rail notices (contract 1.2), as a migration a connector's folder
 * re-exports (for example `migrations/20261228100000_connector_notices.ts`:
 * `export { up } from "@corridor/connector/migrations/notices";`).
 *
 * - connector_notices: every notice reported, once per bank entry id (the bank's own id of the
 *   entry): a file read twice, or a credit reported by both camt.054 and camt.053, is published
 *   once. The outbox carries it to the bus in the same transaction.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("connector_notices")
    .addColumn("bank_entry_id", "text", (c) => c.primaryKey())
    .addColumn("notice_id", "text", (c) => c.notNull().unique())
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("occurred_at", "timestamptz", (c) => c.notNull())
    .addColumn("recorded_at", "timestamptz", (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("connector_notices").execute();
}
