import { sql, type Kysely } from "kysely";

// Cards (issue 27, Grid's /cards): a card issued to a customer, bound to internal accounts of that
// customer (its funding sources, in priority order). A card is PROCESSING until the platform's card
// issuer provisions it (sandbox: the sandbox service, over corridor.cards.issuance.v1 and back on
// corridor.sandbox.v1), then ACTIVE, FROZEN or CLOSED. A funding source removed stays as a row with
// removed_at set (INACTIVE), so a delegated key created for it still names it.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("cards")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("platform_id", "text", (c) => c.notNull())
    .addColumn("cardholder_id", "text", (c) => c.notNull())
    .addColumn("platform_card_id", "text", (c) => c.notNull())
    .addColumn("state", "text", (c) => c.notNull().check(sql`state in ('PROCESSING', 'ACTIVE', 'FROZEN', 'CLOSED')`))
    .addColumn("state_reason", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("form", "text", (c) => c.notNull())
    .addColumn("currency", "text", (c) => c.notNull())
    .addColumn("brand", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("last4", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("exp_month", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("exp_year", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("issuer_ref", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("max_spend_per_transaction", "bigint", (c) => c.check(sql`max_spend_per_transaction > 0`))
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("updated_at", "timestamptz", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("cards_platform_created").on("cards").columns(["platform_id", "created_at", "id"]).execute();
  await db.schema.createIndex("cards_cardholder").on("cards").columns(["platform_id", "cardholder_id"]).execute();
  await db.schema.createIndex("cards_platform_card_id").on("cards").columns(["platform_id", "platform_card_id"]).unique().execute();
  await db.schema
    .createTable("card_funding_sources")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("platform_id", "text", (c) => c.notNull())
    .addColumn("card_id", "text", (c) => c.notNull().references("cards.id"))
    .addColumn("account_id", "text", (c) => c.notNull())
    .addColumn("priority", "integer", (c) => c.notNull().check(sql`priority >= 1`))
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("updated_at", "timestamptz", (c) => c.notNull())
    .addColumn("removed_at", "timestamptz")
    // An ACTIVE delegated key signs for this source (auth-sessions tells): EMBEDDED_WALLET sources are PENDING_AUTH until then.
    .addColumn("delegated", "boolean", (c) => c.notNull().defaultTo(false))
    .execute();
  await db.schema.createIndex("card_funding_sources_card").on("card_funding_sources").columns(["card_id", "priority"]).execute();
  await db.schema.createIndex("card_funding_sources_account").on("card_funding_sources").columns(["platform_id", "account_id"]).execute();
  // An account is bound to a card at most once at a time.
  await db.schema
    .createIndex("card_funding_sources_one_binding")
    .on("card_funding_sources")
    .columns(["card_id", "account_id"])
    .unique()
    .where(sql.ref("removed_at"), "is", null)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("card_funding_sources").execute();
  await db.schema.dropTable("cards").execute();
}
