import { sql, type Kysely } from "kysely";

// Reconciliation of the connectors' end-of-day bank statements (issue 24 item 5,
// docs/connectors.md "Statements and reconciliation"): each statement once per (connector, account,
// bank statement id), its report (CLEAN, BREAKS or RESOLVED once the operator resolved every break)
// and the breaks, each resolvable with a note.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("rail_statements")
    .addColumn("connector", "text", (c) => c.notNull())
    .addColumn("account", "text", (c) => c.notNull())
    .addColumn("statement_id", "text", (c) => c.notNull())
    .addColumn("event_id", "text", (c) => c.notNull())
    .addColumn("statement_date", "text", (c) => c.notNull().check(sql`statement_date ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$'`))
    .addColumn("time_zone", "text", (c) => c.notNull())
    .addColumn("currency", "text", (c) => c.notNull())
    .addColumn("opening_booked", "int8", (c) => c.notNull())
    .addColumn("closing_booked", "int8", (c) => c.notNull())
    .addColumn("entries", "jsonb", (c) => c.notNull())
    .addColumn("source_file", "text", (c) => c.notNull())
    .addColumn("received_at", "timestamptz", (c) => c.notNull())
    .addPrimaryKeyConstraint("rail_statements_pkey", ["connector", "account", "statement_id"])
    .execute();
  await db.schema
    .createTable("reconciliation_reports")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("connector", "text", (c) => c.notNull())
    .addColumn("account", "text", (c) => c.notNull())
    .addColumn("statement_id", "text", (c) => c.notNull())
    .addColumn("statement_date", "text", (c) => c.notNull().check(sql`statement_date ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$'`))
    .addColumn("currency", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull().check(sql`status in ('CLEAN', 'BREAKS', 'RESOLVED')`))
    .addColumn("entry_count", "int4", (c) => c.notNull())
    .addColumn("matched_count", "int4", (c) => c.notNull())
    .addColumn("opening_booked", "int8", (c) => c.notNull())
    .addColumn("closing_booked", "int8", (c) => c.notNull())
    .addColumn("entries_net", "int8", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("updated_at", "timestamptz", (c) => c.notNull())
    .addUniqueConstraint("reconciliation_reports_statement_key", ["connector", "account", "statement_id"])
    .execute();
  await db.schema.createIndex("reconciliation_reports_day_idx").on("reconciliation_reports").columns(["statement_date", "connector", "account"]).execute();
  await db.schema
    .createTable("reconciliation_breaks")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("report_id", "text", (c) => c.notNull().references("reconciliation_reports.id"))
    .addColumn("position", "int4", (c) => c.notNull())
    .addColumn("kind", "text", (c) =>
      c.notNull().check(sql`kind in ('MISSING_IN_LEDGER', 'MISSING_ON_STATEMENT', 'AMOUNT_MISMATCH', 'DIRECTION_MISMATCH', 'DUPLICATE', 'BALANCE_MISMATCH')`),
    )
    .addColumn("transaction_id", "text")
    .addColumn("bank_entry_id", "text")
    .addColumn("reference", "text", (c) => c.notNull())
    .addColumn("ledger_amount", "int8")
    .addColumn("statement_amount", "int8")
    .addColumn("ledger_direction", "text")
    .addColumn("statement_direction", "text")
    .addColumn("detail", "text", (c) => c.notNull())
    .addColumn("resolved_at", "timestamptz")
    .addColumn("resolution_note", "text")
    .addUniqueConstraint("reconciliation_breaks_position_key", ["report_id", "position"])
    .execute();
  // Which transaction each statement entry matched (a payment booked on two statements is a DUPLICATE).
  await db.schema
    .createTable("reconciliation_matches")
    .addColumn("report_id", "text", (c) => c.notNull().references("reconciliation_reports.id"))
    .addColumn("bank_entry_id", "text", (c) => c.notNull())
    .addColumn("transaction_id", "text", (c) => c.notNull())
    .addColumn("direction", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("reconciliation_matches_pkey", ["report_id", "bank_entry_id"])
    .execute();
  await db.schema.createIndex("reconciliation_matches_tx_idx").on("reconciliation_matches").columns(["transaction_id", "direction"]).execute();
  // Statement entries find their transaction by reference among the connector's (any platform).
  await db.schema.createIndex("transactions_connector_reference_idx").on("transactions").columns(["connector", "reference"]).where(sql.ref("connector"), "is not", null).execute();
  await db.schema.createIndex("transactions_connector_settled_idx").on("transactions").columns(["connector", "currency", "settled_at"]).where(sql.ref("connector"), "is not", null).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex("transactions_connector_settled_idx").execute();
  await db.schema.dropIndex("transactions_connector_reference_idx").execute();
  await db.schema.dropTable("reconciliation_matches").execute();
  await db.schema.dropTable("reconciliation_breaks").execute();
  await db.schema.dropTable("reconciliation_reports").execute();
  await db.schema.dropTable("rail_statements").execute();
}
