import { sql, type Kysely } from "kysely";

// External-account ownership verification by micro-deposits (issue 27): a challenge per attempt,
// and its two small credits, each a rail instruction of its own (the transaction id the connector's
// outcomes name). The amounts are the secret the customer confirms; they are never logged.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("ownership_challenges")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("platform_id", "text", (c) => c.notNull())
    .addColumn("external_account_id", "text", (c) => c.notNull())
    .addColumn("method", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull().check(sql`status in ('PENDING', 'VERIFIED', 'FAILED', 'EXPIRED')`))
    .addColumn("currency", "text", (c) => c.notNull())
    .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("max_attempts", "integer", (c) => c.notNull())
    .addColumn("failure_reason", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("expires_at", "timestamptz", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("updated_at", "timestamptz", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("ownership_challenges_account").on("ownership_challenges").columns(["platform_id", "external_account_id", "created_at"]).execute();
  await db.schema
    .createTable("micro_deposits")
    .addColumn("transaction_id", "text", (c) => c.primaryKey())
    .addColumn("challenge_id", "text", (c) => c.notNull().references("ownership_challenges.id"))
    .addColumn("platform_id", "text", (c) => c.notNull())
    .addColumn("amount", "bigint", (c) => c.notNull().check(sql`amount > 0`))
    .addColumn("currency", "text", (c) => c.notNull())
    .addColumn("connector", "text", (c) => c.notNull())
    .addColumn("payment_rail", "text", (c) => c.notNull())
    .addColumn("reference", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull().check(sql`status in ('PENDING', 'COMPLETED', 'FAILED', 'RETURNED')`))
    .addColumn("reason", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("updated_at", "timestamptz", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("micro_deposits_challenge").on("micro_deposits").column("challenge_id").execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("micro_deposits").execute();
  await db.schema.dropTable("ownership_challenges").execute();
}
