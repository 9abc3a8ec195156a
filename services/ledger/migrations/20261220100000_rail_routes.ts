import { sql, type Kysely } from "kysely";

// Rail routing (issue 24, docs/connectors.md): the operator binds a production platform's
// (currency, payment rail) to a connector; every transaction remembers the connector its
// instruction went to, so only that connector's outcomes apply to it. Transactions from before
// (null) were all routed to the sandbox simulator.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("rail_bindings")
    .addColumn("platform_id", "text", (c) => c.notNull())
    .addColumn("currency", "text", (c) => c.notNull())
    .addColumn("payment_rail", "text", (c) => c.notNull())
    .addColumn("connector", "text", (c) => c.notNull().check(sql`connector ~ '^[a-z][a-z0-9-]{1,39}$' and connector <> 'sandbox'`))
    .addColumn("source", "text", (c) => c.notNull().check(sql`source in ('OPERATOR', 'CONFIG')`))
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("updated_at", "timestamptz", (c) => c.notNull())
    .addPrimaryKeyConstraint("rail_bindings_pkey", ["platform_id", "currency", "payment_rail"])
    .execute();
  await db.schema.alterTable("transactions").addColumn("connector", "text").execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("transactions").dropColumn("connector").execute();
  await db.schema.dropTable("rail_bindings").execute();
}
