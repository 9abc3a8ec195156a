import { sql, type Kysely } from "kysely";

/**
 * The package's tables in a connector's own schema, as a migration a connector's folder re-exports
 * (its first file, for example `migrations/20261127000000_connector.ts`:
 * `export { up } from "@corridor/connector/migrations";`). A connector without tables of its own
 * needs no folder: the package's (packages/connector/migrations) is used.
 *
 * - connector_instructions: the one instruction acted on per transaction (a second instruction for a
 *   transaction, under another id, is recognised and ignored).
 * - connector_outcomes: every outcome reported, with its place in the transaction's sequence; the
 *   outbox carries them to the bus in the same transaction.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("connector_instructions")
    .addColumn("transaction_id", "text", (c) => c.primaryKey())
    .addColumn("instruction_id", "text", (c) => c.notNull())
    .addColumn("platform_id", "text", (c) => c.notNull())
    .addColumn("received_at", "timestamptz", (c) => c.notNull())
    .execute();
  await db.schema
    .createTable("connector_outcomes")
    .addColumn("outcome_id", "text", (c) => c.primaryKey())
    .addColumn("transaction_id", "text", (c) => c.notNull())
    .addColumn("platform_id", "text", (c) => c.notNull())
    .addColumn("sequence", "int4", (c) => c.notNull().check(sql`sequence > 0`))
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("reason", "text", (c) => c.notNull())
    .addColumn("occurred_at", "timestamptz", (c) => c.notNull())
    .addColumn("recorded_at", "timestamptz", (c) => c.notNull())
    .addUniqueConstraint("connector_outcomes_sequence_key", ["transaction_id", "sequence"])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("connector_outcomes").execute();
  await db.schema.dropTable("connector_instructions").execute();
}
