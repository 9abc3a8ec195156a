import type { Kysely } from "kysely";

/**
 * The statements table of @corridor/connector (contract v1.2), as a migration a connector's folder
 * re-exports after the package's first one (for example `migrations/20261228000000_statements.ts`:
 * `export { up } from "@corridor/connector/migrations/statements";`). The package's own folder has it.
 *
 * - connector_statements: every statement reported, once per (account, bank statement id).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("connector_statements")
    .ifNotExists()
    .addColumn("account", "text", (c) => c.notNull())
    .addColumn("statement_id", "text", (c) => c.notNull())
    .addColumn("event_id", "text", (c) => c.notNull())
    .addColumn("statement_date", "text", (c) => c.notNull())
    .addColumn("currency", "text", (c) => c.notNull())
    .addColumn("entry_count", "int4", (c) => c.notNull())
    .addColumn("source_file", "text", (c) => c.notNull())
    .addColumn("reported_at", "timestamptz", (c) => c.notNull())
    .addPrimaryKeyConstraint("connector_statements_pkey", ["account", "statement_id"])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("connector_statements").execute();
}
