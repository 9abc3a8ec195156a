import type { Kysely } from "kysely";

// How a platform's webhook event types are named (issue 27): CORRIDOR (OUTGOING_PAYMENT_COMPLETED,
// every existing platform) or GRID (OUTGOING_PAYMENT.COMPLETED), chosen with PATCH /config.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("platform_configs")
    .addColumn("webhook_event_naming", "text", (c) => c.notNull().defaultTo("CORRIDOR"))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("platform_configs").dropColumn("webhook_event_naming").execute();
}
