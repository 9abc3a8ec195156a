import type { Kysely } from "kysely";

// Hosted verification links (POST /customers/{id}/kyc-link): only the SHA-256 of the single-use
// token is stored; a link is open until completed_at is set or expires_at passes.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("kyc_links")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("platform_id", "text", (c) => c.notNull())
    .addColumn("customer_id", "text", (c) => c.notNull().references("customers.id"))
    .addColumn("token_sha256", "text", (c) => c.notNull().unique())
    .addColumn("redirect_url", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("expires_at", "timestamptz", (c) => c.notNull())
    .addColumn("completed_at", "timestamptz")
    .execute();
  await db.schema.createIndex("kyc_links_customer").on("kyc_links").columns(["platform_id", "customer_id"]).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("kyc_links").execute();
}
