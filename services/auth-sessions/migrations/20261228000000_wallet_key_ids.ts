import type { Kysely } from "kysely";

// Issue 26: rotating CORRIDOR_WALLET_ENCRYPTION_KEY. Each sealed wallet key records which key sealed
// it (walletKeyId: the first 8 bytes of SHA-256 of the key, never the key), so reads pick the right
// key and the wallet-key-reencrypt worker knows which rows are left to move to the current key.
// A migration cannot read the service's keys: rows sealed before this stay null, and the worker
// finds their key by trying the configured ones, then records it.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("wallet_keys").addColumn("key_id", "text").execute();
  await db.schema.createIndex("wallet_keys_key_id").on("wallet_keys").column("key_id").execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  // Dropping the column drops its index.
  await db.schema.alterTable("wallet_keys").dropColumn("key_id").execute();
}
