import { sql, type Kysely } from "kysely";

// The db handed to migrations already targets the quotes_fx schema (withSchema).
// The receiver fields asked for in the approval webhook (requestedReceiverCustomerInfoFields), so an
// approval that arrives later through the API is checked against what was asked.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("incoming_approvals")
    .addColumn("requested_fields", "jsonb", (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("incoming_approvals").dropColumn("requested_fields").execute();
}
