import { sql, type Kysely } from "kysely";

// The db handed to migrations already targets the connector's schema.
export async function up(db: Kysely<any>): Promise<void> {
  // One row per instructed transaction: what goes into a file, which file and trace it went in.
  await db.schema
    .createTable("ach_entries")
    .addColumn("transaction_id", "text", (c) => c.primaryKey())
    .addColumn("platform_id", "text", (c) => c.notNull())
    .addColumn("direction", "text", (c) => c.notNull().check(sql`direction in ('PAYOUT', 'PULL')`))
    .addColumn("amount", "int8", (c) => c.notNull().check(sql`amount > 0 and amount <= 9999999999`))
    .addColumn("reference", "text", (c) => c.notNull())
    .addColumn("sec_code", "text", (c) => c.notNull().check(sql`sec_code in ('PPD', 'CCD')`))
    .addColumn("routing_number", "text", (c) => c.notNull())
    .addColumn("account_number", "text", (c) => c.notNull())
    .addColumn("account_type", "text", (c) => c.notNull().check(sql`account_type in ('CHECKING', 'SAVINGS')`))
    .addColumn("receiver_name", "text", (c) => c.notNull())
    .addColumn("window_key", "text", (c) => c.notNull())
    .addColumn("cutoff_at", "timestamptz", (c) => c.notNull())
    .addColumn("effective_date", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull().check(sql`status in ('QUEUED', 'FILED', 'SUBMITTED', 'COMPLETED', 'FAILED', 'RETURNED')`))
    .addColumn("file_name", "text")
    .addColumn("trace_number", "text", (c) => c.unique())
    .addColumn("completes_at", "timestamptz")
    .addColumn("return_code", "text")
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("ach_entries_queued_idx").on("ach_entries").columns(["cutoff_at"]).where(sql.ref("status"), "=", "QUEUED").execute();
  await db.schema.createIndex("ach_entries_submitted_idx").on("ach_entries").columns(["completes_at"]).where(sql.ref("status"), "=", "SUBMITTED").execute();

  // The files built, with their exact bytes: an upload retried after a crash sends the same file.
  await db.schema
    .createTable("ach_files")
    .addColumn("file_name", "text", (c) => c.primaryKey())
    .addColumn("day", "text", (c) => c.notNull())
    .addColumn("modifier", "text", (c) => c.notNull())
    .addColumn("window_key", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull().check(sql`status in ('BUILT', 'UPLOADING', 'UPLOADED', 'HELD')`))
    .addColumn("content", "text", (c) => c.notNull())
    .addColumn("entry_count", "int4", (c) => c.notNull())
    .addColumn("total_debit", "int8", (c) => c.notNull())
    .addColumn("total_credit", "int8", (c) => c.notNull())
    .addColumn("detail", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("built_at", "timestamptz", (c) => c.notNull())
    .addColumn("uploaded_at", "timestamptz")
    .addUniqueConstraint("ach_files_day_modifier_key", ["day", "modifier"])
    .execute();

  // Counters: "trace" numbers entries (the 7 digits after the ODFI's 8 are this modulo 9,999,999, plus 1).
  await db.schema
    .createTable("ach_counters")
    .addColumn("name", "text", (c) => c.primaryKey())
    .addColumn("value", "int8", (c) => c.notNull())
    .execute();
  await db.insertInto("ach_counters").values({ name: "trace", value: 0 }).execute();

  // The bank's files read from its outbox (processed once, by name) and what each said.
  await db.schema
    .createTable("ach_bank_files")
    .addColumn("file_name", "text", (c) => c.primaryKey())
    .addColumn("status", "text", (c) => c.notNull().check(sql`status in ('PROCESSED', 'REFUSED')`))
    .addColumn("detail", "text", (c) => c.notNull())
    .addColumn("processed_at", "timestamptz", (c) => c.notNull())
    .execute();
  await db.schema
    .createTable("ach_bank_items")
    .addColumn("bank_file", "text", (c) => c.notNull())
    .addColumn("line", "int4", (c) => c.notNull())
    .addColumn("kind", "text", (c) => c.notNull().check(sql`kind in ('RETURN', 'NOC', 'INCOMING')`))
    .addColumn("trace_number", "text", (c) => c.notNull())
    .addColumn("original_trace_number", "text", (c) => c.notNull())
    .addColumn("code", "text", (c) => c.notNull())
    .addColumn("amount", "int8", (c) => c.notNull())
    .addColumn("transaction_id", "text")
    .addColumn("detail", "jsonb", (c) => c.notNull())
    .addColumn("received_at", "timestamptz", (c) => c.notNull())
    .addPrimaryKeyConstraint("ach_bank_items_pkey", ["bank_file", "line"])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("ach_bank_items").execute();
  await db.schema.dropTable("ach_bank_files").execute();
  await db.schema.dropTable("ach_counters").execute();
  await db.schema.dropTable("ach_files").execute();
  await db.schema.dropTable("ach_entries").execute();
}
