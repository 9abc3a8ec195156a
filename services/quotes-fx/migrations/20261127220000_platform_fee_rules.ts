import type { Kysely } from "kysely";

// The operator's fee rules per platform (docs/fx.md, "Fees and spreads per platform"): merged over
// the deployment's CORRIDOR_QUOTE_FEES key by key. One row per platform; the rules are the same
// JSON shape as CORRIDOR_QUOTE_FEES, checked by the same schema before they are written.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("platform_fee_rules")
    .addColumn("platform_id", "text", (c) => c.primaryKey())
    .addColumn("rules", "jsonb", (c) => c.notNull())
    .addColumn("updated_at", "timestamptz", (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("platform_fee_rules").execute();
}
