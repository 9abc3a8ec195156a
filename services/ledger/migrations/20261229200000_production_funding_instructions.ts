import { sql, type Kysely } from "kysely";

// Production accounts opened before this release were given the sandbox's funding instructions
// (its made-up bank account, a Spark address nobody holds the key of) when the operator had not
// configured a bank for their currency. Real money sent there would be lost: such accounts have no
// funding instructions from now on (LEDGER_FUNDING_BANK_ACCOUNTS gives them the operator's bank at
// the next start; docs/production.md).
export async function up(db: Kysely<any>): Promise<void> {
  // Through the query builder: the db handed to migrations targets the ledger schema (withSchema),
  // which raw SQL would not.
  await db
    .updateTable("accounts")
    .set({ funding_instructions: sql`'[]'::jsonb` })
    .where("platform_id", "in", db.selectFrom("platforms").select("id").where("environment", "=", "PRODUCTION"))
    .where("owner_kind", "<>", "SYSTEM")
    .where((eb) => eb.or([eb(sql`funding_instructions::text`, "like", "%Corridor Sandbox Bank%"), eb(sql`funding_instructions::text`, "like", "%SPARK_WALLET%")]))
    .execute();
}

export async function down(): Promise<void> {
  // Nothing to restore: the sandbox instructions were never valid for production accounts.
}
