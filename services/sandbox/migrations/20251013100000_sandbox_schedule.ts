import { sql, type Kysely } from "kysely";

// The db handed to migrations already targets the sandbox schema (withSchema).

export async function up(db: Kysely<any>): Promise<void> {
  // Each platform's sandbox time is real time plus offset_ms.
  await db.schema
    .createTable("clocks")
    .addColumn("platform_id", "text", (c) => c.primaryKey())
    .addColumn("offset_ms", "int8", (c) => c.notNull().defaultTo(0).check(sql`offset_ms >= 0`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull())
    .execute();

  // The durable schedule: actions due at a sandbox time, fired once by the worker or a clock move.
  await db.schema
    .createTable("scheduled_actions")
    .addColumn("id", "bigserial", (c) => c.primaryKey())
    .addColumn("platform_id", "text", (c) => c.notNull())
    .addColumn("due_at", "timestamptz", (c) => c.notNull())
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("payload", "jsonb", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull().check(sql`status in ('PENDING', 'FIRED')`))
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("fired_at", "timestamptz")
    .execute();
  await db.schema
    .createIndex("scheduled_actions_pending_idx")
    .on("scheduled_actions")
    .columns(["platform_id", "due_at"])
    .where(sql.ref("status"), "=", "PENDING")
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("scheduled_actions").execute();
  await db.schema.dropTable("clocks").execute();
}
