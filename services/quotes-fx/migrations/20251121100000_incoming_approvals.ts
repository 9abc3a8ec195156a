import { sql, type Kysely } from "kysely";

// The db handed to migrations already targets the quotes_fx schema (withSchema).

export async function up(db: Kysely<any>): Promise<void> {
  // Incoming UMA payments acknowledged with 202: the platform must decide before `deadline`
  // (on the platform's sandbox clock), else the approval-timeout worker fails them.
  await db.schema
    .createTable("incoming_approvals")
    .addColumn("transaction_id", "text", (c) => c.primaryKey())
    .addColumn("platform_id", "text", (c) => c.notNull())
    .addColumn("deadline", "timestamptz", (c) => c.notNull())
    .addColumn("state", "text", (c) => c.notNull().check(sql`state in ('AWAITING', 'DONE')`))
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("updated_at", "timestamptz", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("incoming_approvals_awaiting").on("incoming_approvals").columns(["state", "deadline"]).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("incoming_approvals").execute();
}
