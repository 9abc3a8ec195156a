import type { Kysely } from "kysely";

// Ownership verification by wallet signature (issue 27, Grid's WALLET_SIGNATURE for Spark wallets):
// a challenge keeps the exact message the wallet signs (it binds the platform, the account, its
// address, a random nonce and the expiry). Micro-deposit challenges leave it empty.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("ownership_challenges")
    .addColumn("message_to_sign", "text", (c) => c.notNull().defaultTo(""))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("ownership_challenges").dropColumn("message_to_sign").execute();
}
