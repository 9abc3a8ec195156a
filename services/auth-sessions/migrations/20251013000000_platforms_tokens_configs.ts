import { sql, type Kysely } from "kysely";

// The db handed to migrations already targets the auth_sessions schema (withSchema), so table
// names are unqualified here.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("platforms")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("environment", "text", (c) => c.notNull().check(sql`environment in ('SANDBOX', 'PRODUCTION')`))
    .addColumn("is_regulated", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .execute();
  // ListPlatforms answers oldest first.
  await db.schema.createIndex("platforms_created_idx").on("platforms").columns(["created_at", "id"]).execute();

  await db.schema
    .createTable("tokens")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("platform_id", "text", (c) => c.notNull().references("platforms.id"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("permissions", "jsonb", (c) => c.notNull())
    // Unique across deleted tokens too: a revoked client id is never handed out again.
    .addColumn("client_id", "text", (c) => c.notNull().unique())
    .addColumn("secret_sha256", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("updated_at", "timestamptz", (c) => c.notNull())
    .addColumn("deleted_at", "timestamptz")
    .execute();
  // ListTokens: a platform's live tokens, newest first, keyset on (created_at, id).
  await db.schema
    .createIndex("tokens_platform_live_created_idx")
    .on("tokens")
    .columns(["platform_id", "created_at desc", "id desc"])
    .where(sql.ref("deleted_at"), "is", null)
    .execute();
  // The exact-name filter.
  await db.schema
    .createIndex("tokens_platform_name_idx")
    .on("tokens")
    .columns(["platform_id", "name"])
    .where(sql.ref("deleted_at"), "is", null)
    .execute();

  await db.schema
    .createTable("platform_configs")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("platform_id", "text", (c) => c.notNull().unique().references("platforms.id"))
    .addColumn("uma_domain", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("proxy_uma_subdomain", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("webhook_endpoint", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("supported_currencies", "jsonb", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("updated_at", "timestamptz", (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("platform_configs").execute();
  await db.schema.dropTable("tokens").execute();
  await db.schema.dropTable("platforms").execute();
}
