import { sql, type Kysely } from "kysely";

// Reconciliation matches a bank statement's entries to micro-deposits too (docs/connectors.md,
// "Micro-deposits"): by reference, and the connector's completed ones of a day.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex("micro_deposits_connector_reference").on("micro_deposits").columns(["connector", "reference"]).execute();
  await db.schema.createIndex("micro_deposits_connector_completed").on("micro_deposits").columns(["connector", "currency", "updated_at"]).where(sql.ref("status"), "=", "COMPLETED").execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex("micro_deposits_connector_completed").execute();
  await db.schema.dropIndex("micro_deposits_connector_reference").execute();
}
