import { sql, type Kysely } from "kysely";

// The bank's acknowledgements of our files (docs/connectors.md, "Acknowledgements"): a file the
// bank accepted is ACCEPTED, one it sent back REJECTED (every entry) or PARTIALLY_REJECTED (some
// batches); when and by which of the bank's files. The bank's items gain a kind (the echoed
// entries of a file sent back: REJECTED_ENTRY) and a suspense reason: a
// return or NOC whose original trace is unknown or whose entry does not match ours is kept with
// the reason and acted on by nobody but the operator.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("ach_files").dropConstraint("ach_files_status_check").execute();
  await db.schema.alterTable("ach_files").addCheckConstraint("ach_files_status_check", sql`status in ('BUILT', 'UPLOADING', 'UPLOADED', 'HELD', 'ACCEPTED', 'REJECTED', 'PARTIALLY_REJECTED')`).execute();
  await db.schema.alterTable("ach_files").addColumn("acknowledged_at", "timestamptz").execute();
  await db.schema.alterTable("ach_files").addColumn("acknowledgement", "text").execute();
  await db.schema.alterTable("ach_bank_items").dropConstraint("ach_bank_items_kind_check").execute();
  await db.schema.alterTable("ach_bank_items").addCheckConstraint("ach_bank_items_kind_check", sql`kind in ('RETURN', 'NOC', 'INCOMING', 'REJECTED_ENTRY')`).execute();
  await db.schema.alterTable("ach_bank_items").addColumn("suspense_reason", "text").execute();
  await db.schema.createIndex("ach_bank_items_trace_idx").on("ach_bank_items").columns(["trace_number"]).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex("ach_bank_items_trace_idx").execute();
  await db.schema.alterTable("ach_bank_items").dropColumn("suspense_reason").execute();
  await db.schema.alterTable("ach_bank_items").dropConstraint("ach_bank_items_kind_check").execute();
  await db.schema.alterTable("ach_bank_items").addCheckConstraint("ach_bank_items_kind_check", sql`kind in ('RETURN', 'NOC', 'INCOMING')`).execute();
  await db.schema.alterTable("ach_files").dropColumn("acknowledgement").execute();
  await db.schema.alterTable("ach_files").dropColumn("acknowledged_at").execute();
  await db.schema.alterTable("ach_files").dropConstraint("ach_files_status_check").execute();
  await db.schema.alterTable("ach_files").addCheckConstraint("ach_files_status_check", sql`status in ('BUILT', 'UPLOADING', 'UPLOADED', 'HELD')`).execute();
}
