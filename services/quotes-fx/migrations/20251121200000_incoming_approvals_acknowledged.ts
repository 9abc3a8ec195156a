import { type Kysely } from "kysely";

// The db handed to migrations already targets the quotes_fx schema (withSchema).
// Approval rows are now recorded before the webhook is sent (crash safety); `acknowledged` tells a
// 202's window (timeout → PAYMENT_APPROVAL_TIMED_OUT) from an exchange that never got a reply
// (→ PAYMENT_APPROVAL_WEBHOOK_ERROR). Rows written before this migration were all 202s.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("incoming_approvals").addColumn("acknowledged", "boolean", (c) => c.notNull().defaultTo(true)).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("incoming_approvals").dropColumn("acknowledged").execute();
}
