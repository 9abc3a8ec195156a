import { sql, type Kysely } from "kysely";

// Delegated keys (Grid's /auth/delegated-keys): a P-256 key pair made and custodied by the service
// for one embedded wallet, its private key only ever stored sealed under the wallet encryption key.
// PENDING after the second leg of its creation, ACTIVE after the third (at most one ACTIVE per
// account: a partial unique index), REVOKED at the end. activation_request_id is the Request-Id of
// the third leg's challenge.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("wallet_delegated_keys")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("platform_id", "text", (c) => c.notNull())
    .addColumn("account_id", "text", (c) => c.notNull())
    .addColumn("public_key", "text", (c) => c.notNull())
    .addColumn("sealed_key", "bytea", (c) => c.notNull())
    .addColumn("key_id", "text", (c) => c.notNull())
    .addColumn("nickname", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("activation_request_id", "text", (c) => c.notNull().unique())
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("updated_at", "timestamptz", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("wallet_delegated_keys_account").on("wallet_delegated_keys").columns(["platform_id", "account_id"]).execute();
  await db.schema
    .createIndex("wallet_delegated_keys_one_active")
    .on("wallet_delegated_keys")
    .columns(["platform_id", "account_id"])
    .unique()
    .where(sql.ref("status"), "=", "ACTIVE")
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("wallet_delegated_keys").execute();
}
