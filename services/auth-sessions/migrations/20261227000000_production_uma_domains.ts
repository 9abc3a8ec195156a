import { sql, type Kysely } from "kysely";

// Issue 29, item 6: production platforms get a UMA domain of their own under the operator's
// CORRIDOR_UMA_DOMAIN when they are created. Those created before had none: this queue lists them
// (exactly the production platforms whose config has an empty uma_domain now), and the service's
// `uma-domain-backfill` worker gives each its default domain through the config-change path (board,
// PlatformConfigUpdated event, so customers-kyc gives their customers addresses) and removes the
// row. A migration cannot read the service's settings; the worker can. A platform that clears its
// domain later is not in the queue, so its choice stands.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("uma_domain_backfill")
    .addColumn("platform_id", "text", (c) => c.primaryKey())
    .addColumn("queued_at", "timestamptz", (c) => c.notNull())
    .execute();
  // Query builder, not raw SQL: the migrator's db qualifies table names with the service's schema.
  await db
    .insertInto("uma_domain_backfill")
    .columns(["platform_id", "queued_at"])
    .expression(
      db
        .selectFrom("platforms as p")
        .innerJoin("platform_configs as c", "c.platform_id", "p.id")
        .select(["p.id", sql<Date>`now()`.as("queued_at")])
        .where("p.environment", "=", "PRODUCTION")
        .where("c.uma_domain", "=", ""),
    )
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("uma_domain_backfill").execute();
}
