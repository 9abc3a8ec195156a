import { sql, type Kysely } from "kysely";

// Returns of received credits through the rail (rail contract 1.3, docs/connectors.md "Deposits
// and suspense"): the RETURN instruction's transaction id (once per attempt: the connector
// deduplicates on it, the outcomes name it), the reason the operator chose, and why a connector
// failed it (RETURN_FAILED: the money is still in suspense).

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("received_credits")
    .addColumn("return_transaction_id", "text", (c) => c.unique())
    .addColumn("return_reason", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("return_detail", "text", (c) => c.notNull().defaultTo(""))
    .execute();
  await db.schema.alterTable("received_credits").dropConstraint("received_credits_status_check").ifExists().execute();
  await db.schema
    .alterTable("received_credits")
    .addCheckConstraint("received_credits_status_check", sql`status in ('SUSPENSE', 'CREDITED', 'RETURN_REQUESTED', 'RETURNED', 'RETURN_FAILED')`)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("received_credits").dropConstraint("received_credits_status_check").ifExists().execute();
  await db.updateTable("received_credits").set({ status: "SUSPENSE" }).where("status", "=", "RETURN_FAILED").execute();
  await db.schema.alterTable("received_credits").addCheckConstraint("received_credits_status_check", sql`status in ('SUSPENSE', 'CREDITED', 'RETURN_REQUESTED', 'RETURNED')`).execute();
  await db.schema.alterTable("received_credits").dropColumn("return_detail").dropColumn("return_reason").dropColumn("return_transaction_id").execute();
}
