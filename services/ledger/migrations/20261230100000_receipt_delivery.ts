import type { Kysely } from "kysely";

// Grid's receipt delivery confirmation (POST /transactions/{id}/confirm, issue 27): when the
// platform says it delivered the transaction's receipt to its customer; null until it does.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("transactions").addColumn("receipt_delivery_confirmed_at", "timestamptz").execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("transactions").dropColumn("receipt_delivery_confirmed_at").execute();
}
