import { describe, expect, it } from "vitest";
import pg from "pg";
import { Kysely, PostgresDialect, sql } from "kysely";
import { createFreshDatabase } from "../../../test/infra/databases.js";
import { preparingPool } from "../src/db/prepared.js";

/** A Kysely over one pooled connection, so pg_prepared_statements shows what that connection prepared. */
async function oneConnection(maxStatements?: number) {
  const fresh = await createFreshDatabase(process.env.DATABASE_URL!, "corridor_t_prep");
  const pool = new pg.Pool({ connectionString: fresh.url, max: 1 });
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: preparingPool(pool, maxStatements) }) });
  const prepared = async () =>
    (await sql<{ statement: string }>`select statement from pg_prepared_statements order by prepare_time`.execute(db)).rows.map((r) => r.statement);
  return {
    db,
    prepared,
    async dispose() {
      await db.destroy();
      await fresh.drop();
    },
  };
}

describe.skipIf(!process.env.DATABASE_URL)("prepared statements (DATABASE_PREPARED_STATEMENTS)", () => {
  it("prepares each parameterised statement once per connection and answers as an unnamed one would", async () => {
    const c = await oneConnection();
    try {
      await sql`create table t (id int primary key, v text)`.execute(c.db);
      for (let i = 0; i < 5; i++) await c.db.insertInto("t").values({ id: i, v: `v${i}` }).execute();
      const rows = await c.db.selectFrom("t").selectAll().where("id", ">=", 3).orderBy("id").execute();
      expect(rows).toEqual([{ id: 3, v: "v3" }, { id: 4, v: "v4" }]);
      const statements = await c.prepared();
      // One insert (five executions), one select; DDL and the catalog query without parameters stay unnamed.
      expect(statements.filter((s) => s.startsWith("insert into"))).toHaveLength(1);
      expect(statements.filter((s) => s.includes('from "t"'))).toHaveLength(1);
      expect(statements.some((s) => s.startsWith("create table"))).toBe(false);
    } finally {
      await c.dispose();
    }
  });

  it("plans every execution with its values, never with a generic plan (which cannot use a partial index a parameter must match)", async () => {
    const c = await oneConnection();
    try {
      await sql`create table q (id int primary key, status text not null)`.execute(c.db);
      await sql`insert into q select g, 'DONE' from generate_series(1, 1000) g`.execute(c.db);
      await sql`analyze q`.execute(c.db);
      // A primary-key lookup: after five custom plans PostgreSQL would keep the generic one (it
      // costs the same); for the webhook queue's statements it kept one that scanned the table.
      for (let i = 0; i < 12; i++) await c.db.selectFrom("q").select("status").where("id", "=", i).execute();
      const plans = await sql<{ generic_plans: string; custom_plans: string }>`select generic_plans, custom_plans from pg_prepared_statements where statement like 'select "status" from "q"%'`.execute(c.db);
      expect(plans.rows).toHaveLength(1);
      expect(Number(plans.rows[0]!.generic_plans)).toBe(0);
      expect(Number(plans.rows[0]!.custom_plans)).toBe(12);
    } finally {
      await c.dispose();
    }
  });

  it("runs statements past the cap unnamed", async () => {
    const c = await oneConnection(2);
    try {
      for (let i = 0; i < 5; i++) await sql`select ${i}::int + ${sql.raw(String(i))} as n`.execute(c.db);
      expect((await sql<{ n: number }>`select ${40}::int + 2 as n`.execute(c.db)).rows[0]!.n).toBe(42);
      expect((await c.prepared()).length).toBe(2);
    } finally {
      await c.dispose();
    }
  });

  it("survives a table changing shape under a prepared select *: at once outside a transaction, on the retry inside one", async () => {
    const c = await oneConnection();
    try {
      await sql`create table t (id int primary key, v text)`.execute(c.db);
      await c.db.insertInto("t").values({ id: 1, v: "a" }).execute();
      const read = (db: Kysely<any>) => db.selectFrom("t").selectAll().where("id", "=", 1).executeTakeFirst();
      expect(await read(c.db)).toEqual({ id: 1, v: "a" });

      await sql`alter table t add column w text default 'x'`.execute(c.db);
      expect(await read(c.db)).toEqual({ id: 1, v: "a", w: "x" });

      await sql`alter table t add column z int default 7`.execute(c.db);
      // In a transaction the failed statement aborts it: the transaction fails once…
      await expect(c.db.transaction().execute((trx) => read(trx))).rejects.toThrow(/cached plan must not change result type/);
      // …and its retry prepares the statement afresh.
      expect(await c.db.transaction().execute((trx) => read(trx))).toEqual({ id: 1, v: "a", w: "x", z: 7 });
    } finally {
      await c.dispose();
    }
  });

  it("knows a transaction is still open after ROLLBACK TO SAVEPOINT: the stale statement's own error is reported, not a retry's", async () => {
    const c = await oneConnection();
    try {
      await sql`create table t (id int primary key, v text)`.execute(c.db);
      await c.db.insertInto("t").values({ id: 1, v: "a" }).execute();
      const read = (db: Kysely<any>) => db.selectFrom("t").selectAll().where("id", "=", 1).executeTakeFirst();
      await read(c.db);
      await sql`alter table t add column w text`.execute(c.db);
      await expect(
        c.db.transaction().execute(async (trx) => {
          await sql`savepoint s`.execute(trx);
          await sql`rollback to savepoint s`.execute(trx);
          return read(trx);
        }),
      ).rejects.toThrow(/cached plan must not change result type/);
    } finally {
      await c.dispose();
    }
  });
});
