import type { Kysely } from "kysely";

// Strong customer authentication (issue 27, docs/sca.md): a quote that needs SCA is stored in
// PENDING_AUTHORIZATION with the challenge auth-sessions issued, and remembers whether it was
// created with immediatelyExecute (it executes once authorized).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("quotes")
    .addColumn("sca_challenge", "jsonb")
    .addColumn("execute_on_authorization", "boolean", (c) => c.notNull().defaultTo(false))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("quotes").dropColumn("sca_challenge").dropColumn("execute_on_authorization").execute();
}
