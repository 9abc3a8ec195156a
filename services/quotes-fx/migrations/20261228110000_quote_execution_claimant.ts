import type { Kysely } from "kysely";

// Who holds a quote's execution claim (execution_started_at): a hash of the Idempotency-Key of the
// request that took it. A retry of that same request (the same key: the service's key claim lets
// one request under a key run at a time) resumes an execution its first attempt left half done (a
// process killed between the claim and the commit), instead of answering 409 "already executed"
// to the client whose request it is. Null: no key, or no claim.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("quotes").addColumn("execution_claimant", "text").execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("quotes").dropColumn("execution_claimant").execute();
}
