import { sql, type Kysely } from "kysely";
import type { Migration } from "kysely/migration";

/**
 * The channel a schema's outbox notifies on commit (a trigger on the outbox, migration
 * 00000000000004): its relay LISTENs and publishes at once instead of waiting for its next poll.
 */
export function outboxChannel(schema: string): string {
  return `corridor_outbox_${schema}`;
}

/**
 * The kit's own tables, created in every service schema by migrateSchema next to the service's
 * migrations. The names sort before any real timestamp so they always run first.
 */
export const kitMigrations: Record<string, Migration> = {
  "00000000000001_kit_outbox_inbox": {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable("outbox")
        .addColumn("id", "bigint", (c) => c.primaryKey().generatedAlwaysAsIdentity())
        .addColumn("event_id", "text", (c) => c.notNull())
        .addColumn("topic", "text", (c) => c.notNull())
        .addColumn("key", "text", (c) => c.notNull())
        .addColumn("payload", "bytea", (c) => c.notNull())
        .addColumn("headers", "jsonb", (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
        .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
        .addColumn("published_at", "timestamptz")
        .execute();
      // The relay only ever looks for what is still unpublished, oldest first.
      await db.schema
        .createIndex("outbox_unpublished_idx")
        .on("outbox")
        .column("id")
        .where(sql.ref("published_at"), "is", null)
        .execute();
      await db.schema
        .createTable("inbox")
        .addColumn("consumer", "text", (c) => c.notNull())
        .addColumn("event_id", "text", (c) => c.notNull())
        .addColumn("processed_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
        .addPrimaryKeyConstraint("inbox_pkey", ["consumer", "event_id"])
        .execute();
    },
    async down(db: Kysely<any>) {
      await db.schema.dropTable("inbox").execute();
      await db.schema.dropTable("outbox").execute();
    },
  },
  "00000000000002_kit_idempotency_keys": {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable("idempotency_keys")
        .addColumn("platform_id", "text", (c) => c.notNull())
        .addColumn("key", "text", (c) => c.notNull())
        .addColumn("request_hash", "text", (c) => c.notNull())
        .addColumn("state", "text", (c) => c.notNull().check(sql`state in ('in_flight', 'completed')`))
        .addColumn("response_status", "integer")
        .addColumn("response_body", "jsonb")
        .addColumn("locked_until", "timestamptz")
        .addColumn("created_at", "timestamptz", (c) => c.notNull())
        .addColumn("expires_at", "timestamptz", (c) => c.notNull())
        .addPrimaryKeyConstraint("idempotency_keys_pkey", ["platform_id", "key"])
        .execute();
      await db.schema.createIndex("idempotency_keys_expires_at_idx").on("idempotency_keys").column("expires_at").execute();
    },
    async down(db: Kysely<any>) {
      await db.schema.dropTable("idempotency_keys").execute();
    },
  },
  "00000000000003_kit_outbox_lease": {
    // The relay publishes outside any transaction; a lease, not a row lock, keeps a row with one
    // relay while it does, and runs out if that relay dies.
    async up(db: Kysely<any>) {
      await db.schema
        .alterTable("outbox")
        .addColumn("lease_until", "timestamptz")
        .addColumn("leased_by", "text")
        .execute();
    },
    async down(db: Kysely<any>) {
      await db.schema.alterTable("outbox").dropColumn("leased_by").dropColumn("lease_until").execute();
    },
  },
};

/**
 * The kit's migrations for one schema: the ones above, and those that name the schema in SQL
 * Kysely has no builder for (a trigger and its function).
 */
export function kitMigrationsFor(schema: string): Record<string, Migration> {
  const fn = sql.id(schema, "outbox_notify");
  return {
    ...kitMigrations,
    "00000000000004_kit_outbox_notify": {
      // A NOTIFY is delivered when its transaction commits, and several in one transaction fold
      // into one: whatever a transaction enqueues, its relay is woken once, after the commit.
      async up(db: Kysely<any>) {
        await sql`create function ${fn}() returns trigger language plpgsql as $$
          begin perform pg_notify(${sql.lit(outboxChannel(schema))}, ''); return null; end $$`.execute(db);
        await sql`create trigger outbox_notify after insert on ${sql.id(schema, "outbox")} for each statement execute function ${fn}()`.execute(db);
      },
      async down(db: Kysely<any>) {
        await sql`drop trigger outbox_notify on ${sql.id(schema, "outbox")}`.execute(db);
        await sql`drop function ${fn}()`.execute(db);
      },
    },
  };
}
