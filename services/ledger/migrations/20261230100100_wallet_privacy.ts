import type { Kysely } from "kysely";

// Wallet privacy of embedded wallets (Grid's InternalAccount.privateEnabled, set by
// PATCH /internal-accounts/{id} with a signed retry; issue 27). Off for every account until changed.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("accounts").addColumn("private_enabled", "boolean", (c) => c.notNull().defaultTo(false)).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("accounts").dropColumn("private_enabled").execute();
}
