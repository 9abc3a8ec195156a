import type { Kysely } from "kysely";

// The events API (GET /events, GET /events/{id}, POST /events/{id}/redeliver): what each attempt
// took and answered, when a redelivery was asked for, and the indexes the listing filters use.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("webhook_deliveries")
    // From sending the request to the answer's headers (or to the failure); null before it was kept.
    .addColumn("latency_ms", "integer")
    // The start of the answer's body, bounded; null when there was none or no answer.
    .addColumn("response_excerpt", "text")
    .execute();
  // An event's attempts, read by id.
  await db.schema.createIndex("webhook_deliveries_webhook_idx").on("webhook_deliveries").columns(["platform_id", "webhook_id"]).execute();

  // When the platform last asked for the event to be sent again: from then on the event goes to
  // the endpoint current at that time, and its retries count from then.
  await db.schema.alterTable("webhook_queue").addColumn("redelivered_at", "timestamptz").execute();
  await db.schema.createIndex("webhook_queue_platform_type_idx").on("webhook_queue").columns(["platform_id", "type", "created_at"]).execute();
  await db.schema.createIndex("webhook_queue_platform_resource_idx").on("webhook_queue").columns(["platform_id", "resource_key", "created_at"]).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex("webhook_queue_platform_resource_idx").execute();
  await db.schema.dropIndex("webhook_queue_platform_type_idx").execute();
  await db.schema.alterTable("webhook_queue").dropColumn("redelivered_at").execute();
  await db.schema.dropIndex("webhook_deliveries_webhook_idx").execute();
  await db.schema.alterTable("webhook_deliveries").dropColumn("response_excerpt").dropColumn("latency_ms").execute();
}
