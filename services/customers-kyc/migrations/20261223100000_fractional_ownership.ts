import { sql, type Kysely } from "kysely";

// Beneficial owners' ownershipPercentage is a number (12.5 is a valid share), not an integer. The
// 0-100 check of the first migration keeps applying to the wider type. (Schema builder calls, not
// raw SQL: only they are qualified with the customers_kyc schema.)

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("beneficial_owners").alterColumn("ownership_percentage", (c) => c.setDataType("double precision")).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("beneficial_owners").alterColumn("ownership_percentage", (c) => c.setDataType(sql`integer using round(ownership_percentage)`)).execute();
}
