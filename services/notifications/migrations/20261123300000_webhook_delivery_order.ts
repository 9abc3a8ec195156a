import { sql, type Kysely } from "kysely";

// Concurrent delivery with per-resource order, and "an endpoint receives the events that occur
// after it is set" (decisions §8).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("webhook_queue")
    // Enqueue order: the consumers enqueue one resource's events in bus order (the producers key
    // them by resource), so this orders two webhooks about the same resource.
    .addColumn("seq", "bigserial", (c) => c.notNull())
    // When the event happened (the envelope's timestamp), compared with when the endpoint was set.
    .addColumn("occurred_at", "timestamptz")
    // The resource the webhook is about (data.id); webhooks of one resource go out in seq order.
    .addColumn("resource_key", "text")
    .execute();
  await db.updateTable("webhook_queue").set((eb) => ({ occurred_at: eb.ref("created_at") })).execute();
  await db.schema.alterTable("webhook_queue").alterColumn("occurred_at", (c) => c.setNotNull()).execute();

  // "Is an earlier (later) webhook of this resource still pending?" Delivered rows stay in the
  // table but not in this index.
  await db.schema
    .createIndex("webhook_queue_pending_resource_idx")
    .on("webhook_queue")
    .columns(["platform_id", "resource_key", "seq"])
    .where(sql.ref("status"), "=", "PENDING")
    .execute();
  // "How many POSTs are in flight to this platform's endpoint?" (leased rows only)
  await db.schema.createIndex("webhook_queue_leased_idx").on("webhook_queue").column("platform_id").where(sql.ref("leased_until"), "is not", null).execute();

  // When the current webhook_endpoint was set (the config version that set it); null for an
  // endpoint set before this column existed, which keeps receiving everything.
  await db.schema.alterTable("webhook_settings").addColumn("endpoint_set_at", "timestamptz").execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("webhook_settings").dropColumn("endpoint_set_at").execute();
  await db.schema.dropIndex("webhook_queue_leased_idx").execute();
  await db.schema.dropIndex("webhook_queue_pending_resource_idx").execute();
  await db.schema.alterTable("webhook_queue").dropColumn("resource_key").dropColumn("occurred_at").dropColumn("seq").execute();
}
