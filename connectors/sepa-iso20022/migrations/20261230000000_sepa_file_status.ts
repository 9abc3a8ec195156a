import { sql, type Kysely } from "kysely";

// The bank's verdict on a pain.001 file (its pain.002 group status, else what its transactions say):
// ACCEPTED, REJECTED (the whole file; never for the duplicate check DU01) or PARTIALLY_ACCEPTED,
// when and by which report.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("sepa_files").dropConstraint("sepa_files_state_check").execute();
  await db.schema.alterTable("sepa_files").addCheckConstraint("sepa_files_state_check", sql`state in ('BUILT', 'UPLOADED', 'ACCEPTED', 'REJECTED', 'PARTIALLY_ACCEPTED')`).execute();
  await db.schema.alterTable("sepa_files").addColumn("status_report", "text").execute();
  await db.schema.alterTable("sepa_files").addColumn("status_reason", "text").execute();
  await db.schema.alterTable("sepa_files").addColumn("acknowledged_at", "timestamptz").execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const c of ["acknowledged_at", "status_reason", "status_report"]) await db.schema.alterTable("sepa_files").dropColumn(c).execute();
  await db.schema.alterTable("sepa_files").dropConstraint("sepa_files_state_check").execute();
  await db.schema.alterTable("sepa_files").addCheckConstraint("sepa_files_state_check", sql`state in ('BUILT', 'UPLOADED')`).execute();
}
