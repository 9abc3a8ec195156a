import { sql, type Kysely } from "kysely";

// InternalAccount.status (issue 10): ACTIVE for platform and system accounts; a customer's accounts
// follow the customer's copy (domain/account-status.ts), kept in step by the data layer whenever the
// copy changes, an account is opened or the customer is closed. Existing rows are backfilled here
// by the same rule.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("accounts").addColumn("status", "text", (c) => c.notNull().defaultTo("ACTIVE")).execute();
  // Customer accounts: PENDING unless the customer's copy says otherwise (query builder, so the
  // schema plugin qualifies the tables).
  await db.updateTable("accounts").set({ status: "PENDING" }).where("owner_kind", "=", "CUSTOMER").execute();
  await db
    .updateTable("accounts as a")
    .from("customers as c")
    .set({
      status: sql`case when c.closed_at is not null or c.is_deleted then 'CLOSED' when c.verification_status = 'REJECTED' then 'FROZEN' when c.verification_status = 'APPROVED' then 'ACTIVE' else 'PENDING' end`,
    })
    .whereRef("c.platform_id", "=", "a.platform_id")
    .whereRef("c.id", "=", "a.customer_id")
    .where("a.owner_kind", "=", "CUSTOMER")
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("accounts").dropColumn("status").execute();
}
