import { describe, expect, it } from "vitest";
import pg from "pg";
import { createFreshDatabase } from "../../../test/infra/databases.js";
import { openDatabase, sql } from "../src/db/index.js";

describe.skipIf(!process.env.DATABASE_URL)("the Postgres pool", () => {
  it("survives the server closing its idle connections and serves the next query", async () => {
    const fresh = await createFreshDatabase(process.env.DATABASE_URL!, "corridor_t_pool");
    const idleErrors: Error[] = [];
    const db = await openDatabase({ databaseUrl: fresh.url, poolSize: 2, onIdleError: (e) => idleErrors.push(e) });
    try {
      await sql`select 1`.execute(db.root);
      // Another session kills every connection of the pool while they sit idle.
      const admin = new pg.Client({ connectionString: fresh.url });
      await admin.connect();
      await admin.query("select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()");
      await admin.end();
      await expect.poll(() => idleErrors.length, { timeout: 5_000 }).toBeGreaterThan(0);
      const { rows } = await sql<{ n: number }>`select 2 as n`.execute(db.root);
      expect(rows[0]?.n).toBe(2);
    } finally {
      await db.close();
      await fresh.drop();
    }
  });
});
