import { sql, type Kysely } from "kysely";

// Webhook settings per platform (a copy of the endpoint kept in step by corridor.platforms.v1, and
// the signing secrets), plus one row per delivery attempt.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("webhook_settings")
    .addColumn("platform_id", "text", (c) => c.primaryKey())
    .addColumn("webhook_endpoint", "text", (c) => c.notNull().defaultTo(""))
    // Stored in the clear: signing needs the secret itself, not a hash of it.
    .addColumn("secret", "text", (c) => c.notNull())
    .addColumn("secret_created_at", "timestamptz", (c) => c.notNull())
    .addColumn("previous_secret", "text")
    .addColumn("previous_secret_expires_at", "timestamptz")
    // updated_at of the platform config last applied, in nanoseconds since the epoch (full
    // protobuf precision), so an older event arriving late never overwrites a newer endpoint.
    .addColumn("config_version", "bigint")
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("updated_at", "timestamptz", (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("webhook_deliveries")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("platform_id", "text", (c) => c.notNull())
    .addColumn("webhook_id", "text", (c) => c.notNull())
    .addColumn("type", "text", (c) => c.notNull())
    .addColumn("url", "text", (c) => c.notNull())
    // The exact bytes that were signed, so a delivery can be re-checked later.
    .addColumn("request_body", "text", (c) => c.notNull())
    .addColumn("response_status", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("delivered", "boolean", (c) => c.notNull())
    .addColumn("error", "text")
    .addColumn("attempted_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createIndex("webhook_deliveries_platform_attempted_idx")
    .on("webhook_deliveries")
    .columns(["platform_id", "attempted_at"])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("webhook_deliveries").execute();
  await db.schema.dropTable("webhook_settings").execute();
}
