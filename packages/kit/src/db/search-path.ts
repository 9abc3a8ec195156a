import { sql, type Kysely } from "kysely";
import { env } from "../config.js";

/**
 * DATABASE_SCHEMA_SEARCH_PATH (one default for every config schema that has it: the split/cluster
 * service host and the rail connector host): whether a Postgres pool that serves one schema (the
 * service's or connector's own) starts each connection with that schema on its search_path, so
 * its queries run unqualified, without Kysely's WithSchemaPlugin rewriting every query tree on
 * every execution (issue 28: per-query Node CPU 0.77 of the withSchema one, test/bench/query-span-cost.ts).
 * Turn it off behind a connection pooler in transaction mode that does not keep a client's
 * startup parameters (search_path) on the server connection it lends (docs/operations.md,
 * "Database schemas and search_path").
 */
export const databaseSchemaSearchPathSetting = env.bool(true);

/**
 * A schema name the search_path may carry: what the migrations create (lowercase letters, digits
 * and underscores, at most 63 bytes, PostgreSQL's identifier length). Anything else is refused
 * rather than escaped: the name travels inside a startup option whose own syntax (spaces,
 * backslashes) is not SQL's.
 */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export function assertSchemaName(schema: string): void {
  if (!SCHEMA_NAME.test(schema)) throw new Error(`not a schema name for search_path: ${JSON.stringify(schema)} (lowercase letters, digits and _, at most 63)`);
}

/**
 * The startup option `-c search_path="<schema>",public`: set by the server before the session's
 * first statement, so no connection ever runs a query on another search_path (a `SET` after
 * connect would race pg's first query and cost a round trip per connection). The schema is
 * double-quoted as an identifier (a reserved word stays a name); public stays second, where the
 * extensions' functions live.
 */
export function searchPathOption(schema: string): string {
  assertSchemaName(schema);
  return `-c search_path="${schema}",public`;
}

/**
 * pg pool settings for a pool on `schema`'s search_path: the connection string and the `options`
 * startup parameter. pg takes an `options` query parameter of the URL over the config's own, so
 * one there is moved into the combined value, ours last (the last `-c search_path` wins). PGOPTIONS
 * in the environment is not read (pg itself reads it only when no `options` is given, and the
 * settings come from the config schema alone): other startup options go in the URL's `options`.
 */
export function searchPathPoolConfig(connectionString: string, schema: string): { connectionString: string; options: string } {
  const ours = searchPathOption(schema);
  let url: URL | undefined;
  try {
    url = new URL(connectionString);
  } catch {
    url = undefined; // a socket path ("/var/run/postgresql db"): no query parameters to carry
  }
  const fromUrl = url?.searchParams.get("options");
  if (url && fromUrl !== null && fromUrl !== undefined) {
    url.searchParams.delete("options");
    return { connectionString: url.toString(), options: `${fromUrl} ${ours}`.trim() };
  }
  return { connectionString, options: ours };
}

/**
 * Refuses to go on when the server did not apply the startup option: a pooler that drops `options`
 * (PgBouncer with `options` in ignore_startup_parameters) would leave bare names resolving on the
 * default search_path, where they fail, or find public's tables. Run once by openDatabase on a pool
 * it opens on a search_path.
 * A transaction-mode pooler can still lend other server connections later: it must pass the
 * search_path on (docs/operations.md, "Database schemas and search_path").
 */
export async function assertSearchPath(db: Kysely<any>, schema: string): Promise<void> {
  const { rows } = await sql<{ path: string }>`select current_setting('search_path') as path`.execute(db);
  const first = rows[0]?.path.split(",")[0]?.trim().replace(/^"(.*)"$/, "$1");
  if (first !== schema) {
    throw new Error(
      `the database connection's search_path is ${JSON.stringify(rows[0]?.path)}, not ${schema} first: a connection pooler between here and PostgreSQL dropped the startup option. Make it pass search_path on, or set DATABASE_SCHEMA_SEARCH_PATH=false`,
    );
  }
}
