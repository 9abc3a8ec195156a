import { describe, expect, it } from "vitest";
import pg from "pg";
import { createFreshDatabase } from "../../../test/infra/databases.js";
import { isConnectionFailure, openDatabase, sql, unavailableFromDependency, type DatabaseHandle } from "../src/db/index.js";

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

  /** Terminates, from another session, the backend of the connection that answered `pid`. */
  async function terminate(url: string, pid: number): Promise<void> {
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      await admin.query("select pg_terminate_backend($1)", [pid]);
    } finally {
      await admin.end();
    }
  }

  async function withPool(fn: (db: DatabaseHandle, url: string, errors: Error[]) => Promise<void>): Promise<void> {
    const fresh = await createFreshDatabase(process.env.DATABASE_URL!, "corridor_t_pool");
    const errors: Error[] = [];
    const db = await openDatabase({ databaseUrl: fresh.url, poolSize: 2, onIdleError: (e) => errors.push(e) });
    try {
      await fn(db, fresh.url, errors);
    } finally {
      await db.close();
      await fresh.drop();
    }
  }

  it("survives the server terminating a connection checked out between two statements of a transaction (57P01), and serves the next query", async () => {
    await withPool(async (db, url, errors) => {
      let caught: unknown;
      try {
        await db.root.transaction().execute(async (trx) => {
          const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx);
          // The connection is checked out and idle (a service awaiting a remote call mid-transaction).
          await terminate(url, rows[0]!.pid);
          // pg reports it as an 'error' event on the client: with no listener it would crash the process.
          await expect.poll(() => errors.length, { timeout: 5_000 }).toBeGreaterThan(0);
          await sql`select 1`.execute(trx);
        });
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeDefined();
      // The failed unit of work is a dependency failure (503), not an internal error (500).
      expect(isConnectionFailure(caught)).toBe(true);
      expect(unavailableFromDependency(caught)).toMatchObject({ outcome: "UNAVAILABLE", code: "SERVICE_UNAVAILABLE" });
      const { rows } = await sql<{ n: number }>`select 2 as n`.execute(db.root);
      expect(rows[0]?.n).toBe(2);
    });
  });

  it("fails a statement in flight when its connection is terminated (57P01) as a connection failure, and serves the next query", async () => {
    await withPool(async (db, url) => {
      let caught: unknown;
      try {
        await db.root.connection().execute(async (conn) => {
          const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(conn);
          const sleeping = sql`select pg_sleep(30)`.execute(conn);
          sleeping.catch(() => undefined);
          // The sleep is running on the server before it is terminated.
          const admin = new pg.Client({ connectionString: url });
          await admin.connect();
          try {
            await expect
              .poll(async () => (await admin.query("select count(*)::int as n from pg_stat_activity where pid = $1 and query like 'select pg_sleep%'", [rows[0]!.pid])).rows[0].n, { timeout: 5_000 })
              .toBe(1);
            await admin.query("select pg_terminate_backend($1)", [rows[0]!.pid]);
          } finally {
            await admin.end();
          }
          await sleeping;
        });
      } catch (err) {
        caught = err;
      }
      expect((caught as { code?: string }).code).toBe("57P01");
      expect(isConnectionFailure(caught)).toBe(true);
      const { rows } = await sql<{ n: number }>`select 3 as n`.execute(db.root);
      expect(rows[0]?.n).toBe(3);
    });
  });

  it("re-opens the LISTEN connection the server terminated (57P01), calls the listener once for what it may have missed, and hears later notifications", async () => {
    await withPool(async (db, url, errors) => {
      let calls = 0;
      const stop = await db.listen("corridor_t_channel", () => calls++);
      try {
        const admin = new pg.Client({ connectionString: url });
        await admin.connect();
        try {
          const listening = async () =>
            (await admin.query<{ pid: number }>("select pid from pg_stat_activity where datname = current_database() and query ilike 'listen%'")).rows.map((r) => r.pid);
          const [pid] = await listening();
          expect(pid).toBeDefined();
          await admin.query("select pg_terminate_backend($1)", [pid]);
          await expect.poll(() => errors.length, { timeout: 5_000 }).toBeGreaterThan(0);
          // Reconnected: the listener is told once that notifications may have been missed.
          await expect.poll(() => calls, { timeout: 10_000 }).toBeGreaterThan(0);
          const before = calls;
          await admin.query("select pg_notify('corridor_t_channel', '')");
          await expect.poll(() => calls, { timeout: 5_000 }).toBeGreaterThan(before);
        } finally {
          await admin.end();
        }
      } finally {
        await stop();
      }
    });
  });

  it("classifies a refused connection (nothing listens on the port) as a connection failure", async () => {
    const db = await openDatabase({ databaseUrl: "postgres://postgres@127.0.0.1:1/none", poolSize: 1 });
    try {
      let caught: unknown;
      await sql`select 1`.execute(db.root).catch((err: unknown) => (caught = err));
      expect(isConnectionFailure(caught)).toBe(true);
      expect(unavailableFromDependency(caught)?.code).toBe("SERVICE_UNAVAILABLE");
    } finally {
      await db.close();
    }
  });
});
