import { randomBytes } from "node:crypto";
import { register } from "tsx/esm/api";
import { loadConfig, z } from "../config.js";
import { databaseSchemaSearchPathSetting, migrateSchema, openDatabase, sql, type DatabaseHandle } from "../db/index.js";

export { seededRandom } from "./seeded-random.js";

/**
 * A database of its own for one test file: a fresh Postgres database on the server of
 * DATABASE_URL when it is set, PGlite in memory otherwise. `drop()` closes it and removes it.
 * `searchPathSchema`: the one schema the pool serves unqualified (openDatabase's option; Postgres only).
 */
export async function openTestDatabase(opts: { poolSize?: number; searchPathSchema?: string } = {}): Promise<{ db: DatabaseHandle; drop(): Promise<void> }> {
  const base = process.env.DATABASE_URL;
  if (!base) {
    const db = await openDatabase({});
    return { db, drop: () => db.close() };
  }
  const name = `corridor_t_${randomBytes(6).toString("hex")}`;
  const admin = await openDatabase({ databaseUrl: base, poolSize: 1 });
  await sql`create database ${sql.id(name)}`.execute(admin.root);
  const url = new URL(base);
  url.pathname = `/${name}`;
  // Prepared statements on, as every run mode's config defaults to (DATABASE_PREPARED_STATEMENTS).
  const db = await openDatabase({
    databaseUrl: url.toString(),
    poolSize: opts.poolSize ?? 4,
    preparedStatements: true,
    ...(opts.searchPathSchema ? { searchPathSchema: opts.searchPathSchema } : {}),
  });
  return {
    db,
    async drop() {
      await db.close();
      // pg-pool's end() resolves before its sockets are closed on the server; wait (bounded) until
      // the server sees no session, so the forced drop does not cut connections still closing.
      for (let i = 0; i < 200; i++) {
        const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where datname = ${name}`.execute(admin.root);
        if (rows[0]!.n === 0) break;
        await new Promise((r) => setTimeout(r, 10));
      }
      await sql`drop database if exists ${sql.id(name)} with (force)`.execute(admin.root);
      await admin.close();
    },
  };
}
let tsxLoader = false;

/** DATABASE_SCHEMA_SEARCH_PATH as a service host reads it (default on), for the test databases of one service. */
const testConfig = z.object({ DATABASE_SCHEMA_SEARCH_PATH: databaseSchemaSearchPathSetting });

/**
 * A test database of its own (openTestDatabase) with a service's schema migrated. It serves that
 * one schema, so on Postgres its pool runs on the schema's search_path as a split-mode service's
 * does (unless DATABASE_SCHEMA_SEARCH_PATH=false). Kysely's
 * FileMigrationProvider loads the .ts migration files with Node's own import(), which vitest does
 * not transform, so tsx's loader is registered first, once, as runStandalone runs under tsx.
 */
export async function openServiceTestDatabase(
  service: { schema: string; migrationsDir: string },
  opts: { poolSize?: number } = {},
): Promise<{ db: DatabaseHandle; drop(): Promise<void> }> {
  if (!tsxLoader) {
    register();
    tsxLoader = true;
  }
  const searchPath = loadConfig(testConfig).DATABASE_SCHEMA_SEARCH_PATH;
  const test = await openTestDatabase({ ...opts, ...(searchPath ? { searchPathSchema: service.schema } : {}) });
  await migrateSchema(test.db, service.schema, service.migrationsDir);
  return test;
}

export * from "./refusals.js";
export * from "./transports.js";
