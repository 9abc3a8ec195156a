import type { Kysely } from "kysely";

// The deployment's webhook signing key (X-Grid-Signature, issue 27) when the operator sets none
// (CORRIDOR_WEBHOOK_SIGNING_KEY): generated once by the first process that needs it; every replica
// and restart reads the same row. One row, id 'current'.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("deployment_signing_key")
    .addColumn("id", "text", (c) => c.primaryKey())
    // PKCS#8 PEM of a P-256 private key.
    .addColumn("private_key_pem", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .execute();
  // The copy of the platform's webhookEventNaming (CORRIDOR or GRID), kept with the endpoint copy.
  await db.schema
    .alterTable("webhook_settings")
    .addColumn("webhook_event_naming", "text", (c) => c.notNull().defaultTo("CORRIDOR"))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("webhook_settings").dropColumn("webhook_event_naming").execute();
  await db.schema.dropTable("deployment_signing_key").execute();
}
