import type { Kysely } from "kysely";

// The db handed to migrations already targets the sandbox schema (withSchema).
// Every advance of a platform's clock, so the sandbox time at any past moment is known: a rail
// instruction is timed from the sandbox time it was made at, not the one it arrived at (the bus may
// deliver it after a clock advance the platform made just after the request).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("clock_advances")
    .addColumn("id", "bigserial", (c) => c.primaryKey())
    .addColumn("platform_id", "text", (c) => c.notNull())
    // Real (service clock) time of the advance, and the platform's offset from then on.
    .addColumn("at", "timestamptz", (c) => c.notNull())
    .addColumn("offset_ms", "int8", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("clock_advances_platform_at_idx").on("clock_advances").columns(["platform_id", "at"]).execute();
  // Clocks advanced before this migration: their offset counts from their last change.
  await db
    .insertInto("clock_advances")
    .columns(["platform_id", "at", "offset_ms"])
    .expression(db.selectFrom("clocks").select(["platform_id", "updated_at", "offset_ms"]))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("clock_advances").execute();
}
