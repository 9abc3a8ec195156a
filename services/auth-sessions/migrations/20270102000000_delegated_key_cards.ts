import { type Kysely } from "kysely";

// Delegated keys in Grid's shape (issue 27, cards): a key is created for a card funding source
// (CardFundingSource:<uuidv7> of an EMBEDDED_WALLET internal account, the ledger's) and answers its
// card's id. Keys made before cards keep both columns null: they stay readable, revocable and
// signing for their wallet, answered without a cardId (docs/grid-parity.md).

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("wallet_delegated_keys").addColumn("card_id", "text").execute();
  await db.schema.alterTable("wallet_delegated_keys").addColumn("funding_source_id", "text").execute();
  await db.schema.createIndex("wallet_delegated_keys_funding_source").on("wallet_delegated_keys").columns(["platform_id", "funding_source_id"]).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex("wallet_delegated_keys_funding_source").execute();
  await db.schema.alterTable("wallet_delegated_keys").dropColumn("funding_source_id").execute();
  await db.schema.alterTable("wallet_delegated_keys").dropColumn("card_id").execute();
}
