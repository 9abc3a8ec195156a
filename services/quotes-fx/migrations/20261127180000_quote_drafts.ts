import { sql, type Kysely } from "kysely";

// The db handed to migrations already targets the quotes_fx schema (withSchema).
// A quote is stored as a draft (confirmed = false) before the ledger is asked for its transaction,
// and confirmed in the transaction that completes its Idempotency-Key: a process that dies between
// the two leaves a draft that the retry (found by creation_ref) or the draft worker finishes, never
// a ledger transaction whose quote does not exist (docs/architecture.md, "Quote creation").
// drafted_at is the service clock's time of the draft (created_at is the platform's clock).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("quotes")
    .addColumn("confirmed", "boolean", (c) => c.notNull().defaultTo(true))
    .addColumn("creation_ref", "text")
    .addColumn("drafted_at", "timestamptz")
    .execute();
  await db.schema.createIndex("quotes_creation_ref").on("quotes").columns(["platform_id", "creation_ref"]).where(sql.ref("creation_ref"), "is not", null).execute();
  await db.schema.createIndex("quotes_drafts").on("quotes").column("drafted_at").where(sql.ref("confirmed"), "=", false).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex("quotes_drafts").execute();
  await db.schema.dropIndex("quotes_creation_ref").execute();
  await db.schema.alterTable("quotes").dropColumn("drafted_at").dropColumn("creation_ref").dropColumn("confirmed").execute();
}
