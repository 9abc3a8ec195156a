import type { Kysely } from "kysely";

// Event webhooks waiting to be delivered (decisions §8: at least once, retried with backoff for up
// to 7 days). One row per webhook; every attempt still lands in webhook_deliveries.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("webhook_queue")
    .addColumn("webhook_id", "text", (c) => c.primaryKey())
    .addColumn("platform_id", "text", (c) => c.notNull())
    // The bus event this webhook came from: unique, so handling an event twice enqueues once even
    // without the host's inbox in front.
    .addColumn("source_event_id", "text", (c) => c.notNull().unique())
    .addColumn("type", "text", (c) => c.notNull())
    // The envelope as it is signed and posted on every attempt (the same bytes each time).
    .addColumn("payload", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("next_attempt_at", "timestamptz", (c) => c.notNull())
    // A worker that picked the row owns it until then; a crashed worker's rows come back after it.
    .addColumn("leased_until", "timestamptz")
    .addColumn("last_error", "text")
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("updated_at", "timestamptz", (c) => c.notNull())
    .execute();

  await db.schema.createIndex("webhook_queue_due_idx").on("webhook_queue").columns(["status", "next_attempt_at"]).execute();
  await db.schema.createIndex("webhook_queue_platform_idx").on("webhook_queue").columns(["platform_id", "created_at"]).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("webhook_queue").execute();
}
