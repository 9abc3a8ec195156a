import { type Kysely } from "kysely";

// Transaction.settledAt is "when the payment was or will be settled" (issue 10): while a payment is
// in flight the ledger answers the rail's estimate, kept here from the rail outcomes that carry one
// (RailOutcome.expected_settlement_at). Null until an outcome with an estimate arrives.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("transactions").addColumn("expected_settlement_at", "timestamptz").execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("transactions").dropColumn("expected_settlement_at").execute();
}
