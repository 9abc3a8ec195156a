import { type Kysely } from "kysely";

// The db handed to migrations already targets the quotes_fx schema (withSchema).
// Rows are now also recorded by the consumer of the ledger's INCOMING_PAYMENT_PENDING event, which
// cannot read the platform's sandbox clock inside its transaction: such a row has no deadline until
// the request path or the approval-timeout worker sets one.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("incoming_approvals").alterColumn("deadline", (c) => c.dropNotNull()).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.deleteFrom("incoming_approvals").where("deadline", "is", null).execute();
  await db.schema.alterTable("incoming_approvals").alterColumn("deadline", (c) => c.setNotNull()).execute();
}
