import { sql, type Kysely } from "kysely";

// The db handed to migrations already targets the connector's schema.

export async function up(db: Kysely<any>): Promise<void> {
  // One row per SEPA credit transfer the ledger asked for, and where it is on its way to the bank.
  await db.schema
    .createTable("sepa_transfers")
    .addColumn("transaction_id", "text", (c) => c.primaryKey())
    .addColumn("platform_id", "text", (c) => c.notNull())
    // What travels in the file and comes back in the bank's reports (35 characters at most).
    .addColumn("end_to_end_id", "text", (c) => c.notNull().unique())
    .addColumn("amount", "int8", (c) => c.notNull().check(sql`amount > 0`))
    .addColumn("creditor_name", "text", (c) => c.notNull())
    .addColumn("creditor_iban", "text", (c) => c.notNull())
    .addColumn("creditor_bic", "text")
    .addColumn("remittance", "text", (c) => c.notNull())
    .addColumn("window_id", "text", (c) => c.notNull())
    .addColumn("window_closes_at", "timestamptz", (c) => c.notNull())
    .addColumn("state", "text", (c) => c.notNull().check(sql`state in ('QUEUED', 'FILED', 'SENT', 'COMPLETED', 'REJECTED', 'RETURNED')`))
    .addColumn("file_name", "text")
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("updated_at", "timestamptz", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("sepa_transfers_queued_idx").on("sepa_transfers").columns(["window_closes_at"]).where(sql.ref("state"), "=", "QUEUED").execute();
  await db.schema.createIndex("sepa_transfers_file_idx").on("sepa_transfers").column("file_name").execute();

  // One row per pain.001 file: built with its content in one transaction, then uploaded (exactly once).
  await db.schema
    .createTable("sepa_files")
    .addColumn("file_name", "text", (c) => c.primaryKey())
    .addColumn("window_id", "text", (c) => c.notNull())
    .addColumn("sequence", "int4", (c) => c.notNull())
    .addColumn("content", "text", (c) => c.notNull())
    .addColumn("sha256", "text", (c) => c.notNull())
    .addColumn("transfer_count", "int4", (c) => c.notNull())
    .addColumn("control_sum", "int8", (c) => c.notNull())
    .addColumn("state", "text", (c) => c.notNull().check(sql`state in ('BUILT', 'UPLOADED')`))
    .addColumn("built_at", "timestamptz", (c) => c.notNull())
    .addColumn("uploaded_at", "timestamptz")
    .addUniqueConstraint("sepa_files_window_sequence_key", ["window_id", "sequence"])
    .execute();

  // Every file read from the bank, once (its name and hash), with what it was.
  await db.schema
    .createTable("sepa_bank_documents")
    .addColumn("file_name", "text", (c) => c.primaryKey())
    .addColumn("sha256", "text", (c) => c.notNull())
    .addColumn("message", "text", (c) => c.notNull())
    .addColumn("outcomes", "int4", (c) => c.notNull())
    .addColumn("read_at", "timestamptz", (c) => c.notNull())
    .execute();

  // Credits the bank reported that are not returns of our transfers: kept, never lost, for the
  // deposit matching and the operator's suspense list.
  await db.schema
    .createTable("sepa_received_credits")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("document", "text", (c) => c.notNull())
    .addColumn("amount", "int8", (c) => c.notNull())
    .addColumn("currency", "text", (c) => c.notNull())
    .addColumn("debtor_name", "text")
    .addColumn("debtor_iban", "text")
    .addColumn("reference", "text")
    .addColumn("booking_date", "text")
    .addColumn("received_at", "timestamptz", (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ["sepa_received_credits", "sepa_bank_documents", "sepa_files", "sepa_transfers"]) await db.schema.dropTable(t).execute();
}
