import { sql, type Kysely } from "kysely";

// The ledger's copy of auth-sessions' delegated keys made for card funding sources (issue 27,
// cards): each key's latest status, from the PlatformEvent DelegatedKeyChanged events auth-sessions
// writes in the key's transaction (corridor.platforms.delegated-keys.v1). A key's status only moves
// forward, so an event is applied only when its status is later than the one held here; a funding
// source is `delegated` (ACTIVE rather than PENDING_AUTH) while one of its keys' copies is ACTIVE.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("card_delegated_keys")
    .addColumn("key_id", "text", (c) => c.primaryKey())
    .addColumn("platform_id", "text", (c) => c.notNull())
    .addColumn("funding_source_id", "text", (c) => c.notNull().references("card_funding_sources.id"))
    .addColumn("status", "text", (c) => c.notNull().check(sql`status in ('PENDING', 'ACTIVE', 'REVOKED')`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("card_delegated_keys_source").on("card_delegated_keys").columns(["funding_source_id", "status"]).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("card_delegated_keys").execute();
}
