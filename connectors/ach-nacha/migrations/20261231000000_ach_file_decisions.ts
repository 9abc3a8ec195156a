import { sql, type Kysely } from "kysely";

// The operator's decision on a HELD file (docs/connectors.md, "Held files"): released (back to
// BUILT, uploaded on the next pass) or CANCELLED (never sent; its entries failed back to the
// ledger). When and what the operator noted.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("ach_files").dropConstraint("ach_files_status_check").execute();
  await db.schema.alterTable("ach_files").addCheckConstraint("ach_files_status_check", sql`status in ('BUILT', 'UPLOADING', 'UPLOADED', 'HELD', 'CANCELLED', 'ACCEPTED', 'REJECTED', 'PARTIALLY_REJECTED')`).execute();
  await db.schema.alterTable("ach_files").addColumn("decided_at", "timestamptz").execute();
  await db.schema.createIndex("ach_files_status_idx").on("ach_files").columns(["status", "built_at"]).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex("ach_files_status_idx").execute();
  await db.schema.alterTable("ach_files").dropColumn("decided_at").execute();
  await db.schema.alterTable("ach_files").dropConstraint("ach_files_status_check").execute();
  await db.schema.alterTable("ach_files").addCheckConstraint("ach_files_status_check", sql`status in ('BUILT', 'UPLOADING', 'UPLOADED', 'HELD', 'ACCEPTED', 'REJECTED', 'PARTIALLY_REJECTED')`).execute();
}
