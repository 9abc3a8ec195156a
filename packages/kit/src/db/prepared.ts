import { createHash } from "node:crypto";
import type { PostgresPool, PostgresPoolClient } from "kysely";
import type pg from "pg";
import { env } from "../config.js";

/**
 * DATABASE_PREPARED_STATEMENTS (one default for every run mode's config schema): whether queries
 * with parameters run as named prepared statements. Turn it off behind a connection pooler in
 * transaction mode that does not track prepared statements (PgBouncer before 1.21, or without
 * max_prepared_statements).
 */
export const databasePreparedStatementsSetting = env.bool(true);

/**
 * DATABASE_CONNECT_TIMEOUT_MS (one default for every run mode's config schema): how long opening a
 * Postgres connection may take before it fails (a server that does not answer, rather than one
 * that refuses): the request then answers 503 instead of hanging.
 */
export const databaseConnectTimeoutSetting = env.int(5_000);

/** At most this many distinct statements are prepared per process; later ones run unnamed. */
export const MAX_PREPARED_STATEMENTS = 500;

/** PostgreSQL's "cached plan must not change result type": a prepared `select *` whose table changed shape. */
const isStalePlan = (err: unknown) => (err as { code?: string })?.code === "0A000" && /cached plan must not change result type/.test(String((err as Error)?.message));

/**
 * The pool Kysely uses, whose clients run each parameterised query as a named prepared statement
 * (name = a hash of its text). pg then parses a statement once per connection and afterwards only
 * binds and executes it, and PostgreSQL can keep its plan: on a money movement's dozens of short
 * statements that is most of the parse and plan work and a third of the bytes sent. Statements
 * without parameters (BEGIN, COMMIT, DDL) stay unnamed.
 *
 * A table whose columns change while a process runs (a migration of a rolling deploy) makes its
 * prepared `select *` fail once on each connection with "cached plan must not change result
 * type"; the statement is then renamed (so every connection prepares it afresh) and, outside a
 * transaction, run again at once. Inside one the error rolls the transaction back like any other
 * and the caller's retry uses the new name.
 */
export function preparingPool(pool: pg.Pool, maxStatements = MAX_PREPARED_STATEMENTS): PostgresPool {
  // A prepared statement is planned with its actual values five times; then PostgreSQL may keep a
  // generic plan, made without them. A generic plan cannot use a partial index whose predicate a
  // parameter has to match (`status = $1` for an index `where status = 'PENDING'`), and falls
  // back to scanning: the webhook queue's settle-and-take-next went from ~1 ms to ~350 ms per
  // webhook on a 20,000-row queue. So every execution is planned with its values; what prepared
  // statements still save is the parse and analysis, and a third of the bytes sent. Set on each
  // new connection before its first query (pg runs queries in the order they are queued).
  pool.on("connect", (client) => {
    client.query("set plan_cache_mode = force_custom_plan").catch(() => undefined);
  });
  const names = new Map<string, string>();
  let generation = 0;
  const nameOf = (text: string): string | undefined => {
    const known = names.get(text);
    if (known !== undefined || names.size >= maxStatements) return known;
    const name = `corridor_${generation}_${createHash("sha256").update(text).digest("base64url").slice(0, 24)}`;
    names.set(text, name);
    return name;
  };

  const wrap = (client: pg.PoolClient): PostgresPoolClient => {
    // Kysely opens and ends transactions with these statements on the same client.
    let inTransaction = false;
    return {
      get processID() {
        return (client as unknown as { processID?: number }).processID;
      },
      release: (destroy?: boolean) => client.release(destroy),
      query(textOrCursor: unknown, readonlyValues?: ReadonlyArray<unknown>): any {
        const values = readonlyValues as unknown[] | undefined;
        if (typeof textOrCursor !== "string") return client.query(textOrCursor as pg.Submittable);
        const text = textOrCursor;
        if (!values || values.length === 0) {
          if (/^\s*(begin|start transaction)\b/i.test(text)) inTransaction = true;
          else if (/^\s*(commit|rollback(?!\s+to\b)|end|abort)\b/i.test(text)) inTransaction = false; // not ROLLBACK TO SAVEPOINT
          return client.query(text, values);
        }
        const name = nameOf(text);
        if (!name) return client.query(text, values);
        const run = (n: string) => client.query({ name: n, text, values });
        return run(name).catch(async (err: unknown) => {
          if (!isStalePlan(err)) throw err;
          if (names.get(text) === name) {
            generation++;
            names.delete(text);
          }
          const renamed = nameOf(text);
          // Outside a transaction nothing was aborted: run it again under its new name.
          if (!renamed || inTransaction) throw err;
          return run(renamed);
        });
      },
    };
  };

  return {
    Client: (pool as unknown as PostgresPool).Client,
    options: pool.options,
    connect: async () => wrap(await pool.connect()),
    end: () => pool.end(),
  };
}
