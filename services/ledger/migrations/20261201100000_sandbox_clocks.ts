import { type Kysely } from "kysely";

// The event-fed copy of each sandbox platform's clock offset (corridor.sandbox.v1 ClockAdvanced):
// a sandbox platform's quote transactions expire on its sandbox clock, so the ledger needs the
// offset to find the due ones (after an advance, and as real time passes on an advanced clock).

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("sandbox_clocks")
    .addColumn("platform_id", "text", (c) => c.primaryKey())
    .addColumn("offset_ms", "int8", (c) => c.notNull())
    .addColumn("updated_at", "timestamptz", (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("sandbox_clocks").execute();
}
