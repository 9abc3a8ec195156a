import { type Kysely } from "kysely";

// The event-fed copy of a customer keeps its KYC/KYB verification status (from the summary that
// corridor.customers.v1 CustomerCreated/CustomerUpdated carry), so a transfer of an APPROVED
// customer needs no call to customers-kyc. Null until an event with a status arrives.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("customers").addColumn("verification_status", "text").execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("customers").dropColumn("verification_status").execute();
}
