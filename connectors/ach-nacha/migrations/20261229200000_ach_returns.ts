import type { Kysely } from "kysely";

// RETURN instructions (rail contract 1.3): an entry that returns a credit the operator's account
// received (RDFI) carries what its return entry needs: the reason code, the original trace number
// and RDFI, and the original batch's company (a return batch repeats it).

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("ach_entries").addColumn("return_of", "jsonb").execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("ach_entries").dropColumn("return_of").execute();
}
