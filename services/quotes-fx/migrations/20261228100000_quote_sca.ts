import { sql, type Kysely } from "kysely";

// Strong customer authentication (issue 27, docs/sca.md): a quote that needs SCA is stored in
// PENDING_AUTHORIZATION with the challenge auth-sessions issued, and remembers whether it was
// created with immediatelyExecute (it executes once authorized).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("quotes")
    .addColumn("sca_challenge", "jsonb")
    .addColumn("execute_on_authorization", "boolean", (c) => c.notNull().defaultTo(false))
    .execute();
  await db.schema.alterTable("quotes").dropConstraint("quotes_status_check").execute();
  await db.schema
    .alterTable("quotes")
    .addCheckConstraint("quotes_status_check", sql`status in ('PENDING_AUTHORIZATION', 'PENDING', 'PROCESSING', 'COMPLETED', 'FAILED', 'EXPIRED')`)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("quotes").dropConstraint("quotes_status_check").execute();
  await db.schema.alterTable("quotes").addCheckConstraint("quotes_status_check", sql`status in ('PENDING', 'PROCESSING', 'COMPLETED', 'FAILED', 'EXPIRED')`).execute();
  await db.schema.alterTable("quotes").dropColumn("sca_challenge").dropColumn("execute_on_authorization").execute();
}
