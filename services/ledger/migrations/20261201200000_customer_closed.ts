import { type Kysely } from "kysely";

// A customer the ledger has closed (GetCustomerHoldings with close, asked by customers-kyc before it
// deletes the customer): set under the customer's row lock once it holds nothing, and never cleared
// by the event-fed copy, so no money movement can start between the check and the delete.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("customers").addColumn("closed_at", "timestamptz").execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("customers").dropColumn("closed_at").execute();
}
