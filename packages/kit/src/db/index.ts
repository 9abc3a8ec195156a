import { existsSync, mkdirSync } from "node:fs";
import { promises as fs } from "node:fs";
import * as path from "node:path";
import type { PGlite } from "@electric-sql/pglite";
import { Kysely, PGliteDialect, PostgresDialect, sql, type PostgresPool } from "kysely";
import { DEFAULT_MIGRATION_TABLE, Migrator, type Migration, type MigrationProvider } from "kysely/migration";
import { pathToFileURL } from "node:url";
import type pg from "pg";
import { kitMigrationsFor } from "../outbox/migrations.js";
import { unpackPgliteTemplate } from "./pglite-template.js";
import { preparingPool } from "./prepared.js";
import { assertSearchPath, searchPathPoolConfig } from "./search-path.js";
import { droppingLostConnections } from "./unavailable.js";
import { timingTransactions } from "./timed-transactions.js";
import { createTracingPlugin, kyselyTracingLog } from "../telemetry/kysely.js";

export { sql };
export type { Kysely, Transaction } from "kysely";
export { inputErrorFromDatabase, sqlStateOf } from "./input-errors.js";
export { isConnectionFailure, serviceUnavailable, unavailableFromDependency, UNAVAILABLE_RETRY_AFTER_SECONDS } from "./unavailable.js";
export { databaseConnectTimeoutSetting, databasePreparedStatementsSetting } from "./prepared.js";
export { assertSearchPath, databaseSchemaSearchPathSetting } from "./search-path.js";
export { fixedShapeQuery, MAX_CACHED_VARIANTS, type FixedShapeBuilder, type FixedShapeQuery, type ShapeVariant } from "./fixed-shape.js";
export { databaseStartupWaitSetting, untilDatabaseAnswers } from "./startup-wait.js";

// int8 columns hold money and counts: read them as bigint, never as float or string.
const INT8_OID = 20;

// The drivers are loaded when a database of their kind is opened: a process on Postgres never
// loads PGlite (and its WebAssembly), one on PGlite never loads pg, and one without a database
// (the split gateway) neither.
let pgModule: Promise<typeof pg> | undefined;
/** pg, with int8 read as bigint (set once, on pg's shared type parsers, as before it was lazy). */
export function loadPg(): Promise<typeof pg> {
  pgModule ??= import("pg").then((m) => {
    const driver = (m.default ?? m) as typeof pg;
    driver.types.setTypeParser(INT8_OID, (v) => BigInt(v));
    return driver;
  });
  return pgModule;
}

/**
 * PGlite's buffer pool. initdb writes 128MB into postgresql.conf, which PGlite's WebAssembly memory
 * then holds for good: two thirds of an idle embedded process. Corridor's embedded data is small
 * and the pages also stay in the operating system's file cache, so 16MB keeps the working set;
 * given on the command line (-c), it applies to new and existing data folders alike, and it does
 * not touch durability (WAL, fsync and commit settings are PGlite's). Measured in
 * docs/benchmarks.md, "Start-up and memory".
 */
export const PGLITE_SHARED_BUFFERS = "16MB";

/**
 * One open database. In embedded mode every service shares one PGlite instance (it is a single
 * session, so it must be one Kysely with one connection mutex); elsewhere it is a pg pool. Each
 * service sees only its own schema through `forSchema`.
 */
export interface DatabaseHandle {
  readonly kind: "postgres" | "pglite";
  readonly root: Kysely<any>;
  /**
   * The schema's tables by their bare names: `root` itself for the pool's `searchPathSchema` (its
   * connections resolve bare names there), `root.withSchema(schema)` for any other schema.
   */
  forSchema<DB>(schema: string): Kysely<DB>;
  /** The schema every connection of this pool has first on its search_path (OpenDatabaseOptions.searchPathSchema), if any. */
  readonly searchPathSchema?: string;
  /**
   * Calls `onNotify` for each NOTIFY on `channel` (after the notifying transaction commits) and
   * once more whenever the listening connection is re-established (notifications may have been
   * missed meanwhile). Resolves once listening; the answer stops it.
   */
  listen(channel: string, onNotify: () => void): Promise<() => Promise<void>>;
  /** PGlite only: the whole data folder as a gzip tarball (see pgliteTemplate). */
  dumpDataDir?(): Promise<Blob>;
  /** Postgres only: the pool's connections now (the db.client.connection.* metrics). */
  poolStats?(): { total: number; idle: number; waiting: number; max: number };
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** postgres://… ; when absent, PGlite is used. */
  databaseUrl?: string;
  /** PGlite data folder; in memory when absent. */
  dataDir?: string;
  /** pg pool size per process. */
  poolSize?: number;
  /** Told when a pooled connection fails, idle or checked out (the pool replaces it), or the LISTEN one. */
  onIdleError?: (err: Error) => void;
  /** pg: give up opening a connection after this long (a server that does not answer); none when absent. */
  connectTimeoutMs?: number;
  /** Parameterised queries as named prepared statements (DATABASE_PREPARED_STATEMENTS; see prepared.ts). */
  preparedStatements?: boolean;
  /**
   * PGlite: a data folder tarball (`dumpDataDir`) that a `dataDir` holding no database yet starts
   * from, instead of running initdb. The build makes one with every migration applied
   * (embedded/src/prepare-data.ts); the migrations still run, and find nothing to do. Ignored when
   * the file does not exist or the folder already holds a database.
   */
  pgliteTemplate?: string;
  /**
   * Postgres: a pool that serves this one schema (DATABASE_SCHEMA_SEARCH_PATH; see search-path.ts).
   * Every connection starts with `search_path = <schema>, public`, and `forSchema(schema)` is the
   * plain Kysely: no WithSchemaPlugin rewriting each query. Other schemas (and migrations) stay
   * qualified. Ignored on PGlite, whose one session serves every schema in embedded mode.
   *
   * Only for a handle of one schema (a split-mode service's or a connector's own pool, a service
   * test database), never for one shared by several services (embedded mode, on PGlite or on
   * Postgres): there each schema's SQL must stay qualified. Prepared statements (prepared.ts) are
   * named after their SQL text, and unqualified text is the same in every schema: it is the
   * search_path, fixed per connection at its start, that says which schema a statement (and its
   * plan) reads, so each connection, and the pool, must only ever run one schema's bare names.
   */
  searchPathSchema?: string;
}

export async function openDatabase(opts: OpenDatabaseOptions): Promise<DatabaseHandle> {
  let root: Kysely<any>;
  let kind: DatabaseHandle["kind"];
  let listen: DatabaseHandle["listen"];
  let closeListener = async () => {};
  let dumpDataDir: DatabaseHandle["dumpDataDir"];
  let poolStats: DatabaseHandle["poolStats"];
  if (opts.databaseUrl) {
    kind = "postgres";
    const pg = await loadPg();
    const pool = new pg.Pool({
      ...(opts.searchPathSchema ? searchPathPoolConfig(opts.databaseUrl, opts.searchPathSchema) : { connectionString: opts.databaseUrl }),
      max: opts.poolSize ?? 10,
      ...(opts.connectTimeoutMs ? { connectionTimeoutMillis: opts.connectTimeoutMs } : {}),
    });
    // A connection the server closes (restart, failover, pg_terminate_backend) is reported as an
    // 'error' event on its client; unhandled, it would crash the process. While the client is idle
    // the pool listens (and drops it); while it is checked out (between the statements of a
    // transaction, or of a handler) nobody does, so every client gets its own listener when it is
    // opened. The statement in flight, or the next one, fails (a connection failure the host
    // answers as 503 SERVICE_UNAVAILABLE: see unavailableFromDependency), the client is released
    // as not queryable and the pool drops it; the next query opens a new connection.
    pool.on("connect", (client) => {
      client.on("error", (err) => opts.onIdleError?.(err));
    });
    // The pool re-emits an idle client's error (with the whole client attached): the client's own
    // listener above has reported it already, but an 'error' without a listener would still crash.
    pool.on("error", () => undefined);
    poolStats = () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max: opts.poolSize ?? 10 });
    const kyselyPool = droppingLostConnections(opts.preparedStatements ? preparingPool(pool) : (pool as unknown as PostgresPool));
    root = new Kysely({ dialect: timingTransactions(new PostgresDialect({ pool: kyselyPool })), log: kyselyTracingLog });
    const listener = createPgListener(pg, opts.databaseUrl, opts.onIdleError, opts.connectTimeoutMs);
    listen = listener.listen;
    closeListener = listener.close;
  } else {
    kind = "pglite";
    if (opts.dataDir) mkdirSync(opts.dataDir, { recursive: true });
    const { PGlite, types: pgliteTypes } = await import("@electric-sql/pglite");
    if (opts.dataDir && opts.pgliteTemplate && !existsSync(path.join(opts.dataDir, "PG_VERSION")) && existsSync(opts.pgliteTemplate)) {
      await unpackPgliteTemplate(opts.pgliteTemplate, opts.dataDir);
    }
    const pglite: PGlite = await PGlite.create(opts.dataDir ?? "memory://", {
      parsers: { [pgliteTypes.INT8]: (v: string) => BigInt(v) },
      // PGlite's own start parameters (single-user mode, its fsync setting, …) plus a smaller
      // buffer pool: startParams replaces the defaults, so they are spelled out again.
      startParams: [...PGlite.defaultStartParams, "-c", `shared_buffers=${PGLITE_SHARED_BUFFERS}`],
    });
    root = new Kysely({ dialect: timingTransactions(new PGliteDialect({ pglite })), log: kyselyTracingLog });
    listen = async (channel, onNotify) => {
      const unlisten = await pglite.listen(channel, () => onNotify());
      return () => unlisten();
    };
    dumpDataDir = async () => {
      await pglite.exec("checkpoint");
      return pglite.dumpDataDir("gzip");
    };
  }
  // Every query becomes a span under the active one (a handler's server span, a consumer span).
  root = root.withPlugin(createTracingPlugin());
  // Unqualified only on a Postgres pool whose connections all start on that schema's search_path.
  const bareSchema = kind === "postgres" ? opts.searchPathSchema : undefined;
  const handle: DatabaseHandle = {
    kind,
    root,
    forSchema: <DB>(schema: string) => (schema === bareSchema ? root : root.withSchema(schema)) as unknown as Kysely<DB>,
    ...(bareSchema ? { searchPathSchema: bareSchema } : {}),
    listen,
    ...(dumpDataDir ? { dumpDataDir } : {}),
    ...(poolStats ? { poolStats } : {}),
    async close() {
      await closeListener();
      await root.destroy();
    },
  };
  // A pooler between here and PostgreSQL that dropped the startup option fails here, once, before
  // any query runs on the wrong search_path (every user of such a pool gets the check).
  if (bareSchema) {
    try {
      await assertSearchPath(root, bareSchema);
    } catch (err) {
      await handle.close();
      throw err;
    }
  }
  return handle;
}

/**
 * One connection outside the pool that LISTENs for every channel asked of this process (a
 * listening connection cannot go back to a pool). When it fails it is opened again, with backoff,
 * and every listener is called once, since notifications sent meanwhile are lost.
 */
function createPgListener(pg: typeof import("pg").default, connectionString: string, onError?: (err: Error) => void, connectTimeoutMs?: number) {
  const listeners = new Map<string, Set<() => void>>();
  let client: pg.Client | undefined;
  let connecting: Promise<pg.Client> | undefined;
  let closed = false;
  let retryMs = 100;

  const quoted = (channel: string) => `"${channel.replaceAll('"', '""')}"`;
  const callAll = () => {
    for (const set of listeners.values()) for (const fn of set) fn();
  };

  async function connect(): Promise<pg.Client> {
    const c = new pg.Client({ connectionString, ...(connectTimeoutMs ? { connectionTimeoutMillis: connectTimeoutMs } : {}) });
    c.on("notification", (n) => {
      for (const fn of listeners.get(n.channel) ?? []) fn();
    });
    let lost = false;
    const onLost = (err: Error) => {
      if (lost) return;
      lost = true;
      onError?.(err);
      if (client === c) client = undefined;
      void c.end().catch(() => {});
      reconnect();
    };
    c.on("error", onLost);
    // A connection the server ends without an error message is lost just the same.
    c.on("end", () => {
      if (!closed) onLost(new Error("the LISTEN connection ended"));
    });
    try {
      await c.connect();
      for (const channel of listeners.keys()) await c.query(`listen ${quoted(channel)}`);
    } catch (err) {
      lost = true; // the caller retries; this connection's own events must not start another round
      void c.end().catch(() => {});
      throw err;
    }
    return c;
  }

  function reconnect(): void {
    if (closed || connecting || client) return;
    connecting = connect().then(
      (c) => {
        client = c;
        connecting = undefined;
        retryMs = 100;
        callAll();
        return c;
      },
      (err: Error) => {
        onError?.(err);
        connecting = undefined;
        setTimeout(reconnect, retryMs).unref();
        retryMs = Math.min(retryMs * 2, 10_000);
        throw err;
      },
    );
    connecting.catch(() => {});
  }

  return {
    async listen(channel: string, onNotify: () => void): Promise<() => Promise<void>> {
      const set = listeners.get(channel) ?? new Set();
      set.add(onNotify);
      listeners.set(channel, set);
      if (!client) {
        if (!connecting) {
          connecting = connect().then((c) => {
            client = c;
            connecting = undefined;
            return c;
          });
          connecting.catch(() => (connecting = undefined));
        }
        // The first connection's failure is the caller's to see (a listener is then still
        // polled); the connection is retried with backoff, and once it is back every listener
        // is called, as after any reconnection.
        try {
          await connecting;
        } catch (err) {
          setTimeout(reconnect, retryMs).unref();
          throw err;
        }
      }
      // Idempotent; also covers a channel added while the connection was being opened.
      await client?.query(`listen ${quoted(channel)}`);
      return async () => {
        set.delete(onNotify);
        if (set.size === 0) {
          listeners.delete(channel);
          await client?.query(`unlisten ${quoted(channel)}`).catch(() => {});
        }
      };
    },
    async close() {
      closed = true;
      const c = client ?? (await connecting?.catch(() => undefined));
      client = undefined;
      await c?.end().catch(() => {});
    },
  };
}

/**
 * Brings a service's schema up to date with the timestamp-named migration files in `folder`,
 * preceded by the kit's own migrations (outbox, inbox, idempotency keys), so every service schema
 * has them. The migration bookkeeping lives in the service's own schema too.
 */
export async function migrateSchema(handle: DatabaseHandle, schema: string, folder: string): Promise<void> {
  const provider = new KitAndFolderMigrationProvider(schema, folder);
  // Every start after the first finds the schema up to date: one or two reads instead of the
  // migrator's lock table, lock and bookkeeping statements, and no migration file loaded.
  if (await alreadyMigrated(handle, schema, await provider.names())) return;
  await sql`create schema if not exists ${sql.id(schema)}`.execute(handle.root);
  const migrator = new Migrator({
    // Qualified whatever the pool's search_path (not forSchema, which may be unqualified): every
    // table, index and type a migration creates through Kysely, and the migrator's own
    // bookkeeping, names the schema, so they land there on any connection.
    db: handle.root.withSchema(schema),
    provider,
    migrationTableSchema: schema,
    // Kit migrations are named to run first on a new schema; one added later sorts before
    // service migrations that already ran, which is expected and must not stop the start.
    allowUnorderedMigrations: true,
  });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === "Error");
  if (error || failed) {
    throw new Error(`migrating schema ${schema} failed at ${failed?.migrationName ?? "?"}: ${String(error)}`);
  }
}

/**
 * For a host told not to migrate (CORRIDOR_MIGRATE_ON_START=false, the Helm chart's migrations Job
 * ran them): throws unless every migration this code knows is recorded in the schema. Migrations
 * recorded that this code does not know are accepted: they are a newer release's, applied by its
 * Job before its pods roll out, and an older pod restarting meanwhile must still start (migrations
 * stay compatible with the release before theirs).
 */
export async function assertSchemaMigrated(handle: DatabaseHandle, schema: string, folder: string): Promise<void> {
  const known = await new KitAndFolderMigrationProvider(schema, folder).names();
  const table = await sql<{ present: boolean }>`select to_regclass(quote_ident(${schema}) || '.' || ${DEFAULT_MIGRATION_TABLE}) is not null as present`.execute(handle.root);
  const recorded = new Set<string>();
  if (table.rows[0]?.present) {
    const done = await sql<{ name: string }>`select name from ${sql.id(schema, DEFAULT_MIGRATION_TABLE)}`.execute(handle.root);
    for (const r of done.rows) recorded.add(r.name);
  }
  const missing = known.filter((name) => !recorded.has(name));
  if (missing.length > 0) {
    throw new Error(
      `schema ${schema} lacks ${missing.length} migration(s) (${missing.slice(0, 3).join(", ")}${missing.length > 3 ? ", …" : ""}) and this process does not migrate (CORRIDOR_MIGRATE_ON_START=false): run the migrations first (the chart's migrations Job, or this deployable with CORRIDOR_MIGRATE_ONLY=true)`,
    );
  }
}

/**
 * Whether the schema's migration table lists exactly the migrations known now. Anything else (no
 * table yet, a migration to run, or one recorded that no longer exists, which the migrator
 * reports as an error) goes through the migrator.
 */
async function alreadyMigrated(handle: DatabaseHandle, schema: string, known: string[]): Promise<boolean> {
  const table = await sql<{ present: boolean }>`select to_regclass(quote_ident(${schema}) || '.' || ${DEFAULT_MIGRATION_TABLE}) is not null as present`.execute(handle.root);
  if (!table.rows[0]?.present) return false;
  const done = await sql<{ name: string }>`select name from ${sql.id(schema, DEFAULT_MIGRATION_TABLE)}`.execute(handle.root);
  const recorded = new Set(done.rows.map((r) => r.name));
  return recorded.size === known.length && known.every((name) => recorded.has(name));
}

/** The kit's migrations (defined in code) merged with a service's migration folder. */
class KitAndFolderMigrationProvider implements MigrationProvider {
  constructor(
    private readonly schema: string,
    private readonly folder: string,
  ) {}

  /** Every migration's name, without loading the files. */
  async names(): Promise<string[]> {
    const files = (await this.hasFolder()) ? migrationFiles(await fs.readdir(this.folder)).map(migrationName) : [];
    return [...Object.keys(kitMigrationsFor(this.schema)), ...files];
  }

  async getMigrations(): Promise<Record<string, Migration>> {
    const files = (await this.hasFolder()) ? await loadMigrationFolder(this.folder) : {};
    const kit = kitMigrationsFor(this.schema);
    const clash = Object.keys(files).find((name) => name in kit);
    if (clash) throw new Error(`migration ${clash} in ${this.folder} clashes with a kit migration name`);
    return { ...kit, ...files };
  }

  /** A service without tables of its own may have no migration folder at all. */
  private hasFolder(): Promise<boolean> {
    return fs.stat(this.folder).then(
      (st) => st.isDirectory(),
      () => false,
    );
  }
}

const migrationFiles = (files: string[]) => files.filter((f) => /\.(ts|js|mjs)$/.test(f) && !f.endsWith(".d.ts") && !f.includes(".test.")).sort();
const migrationName = (file: string) => file.replace(/\.(ts|js|mjs)$/, "");

/**
 * Loads `<timestamp>_<name>.ts|js` files from a folder. Our own `import()` (rather than Kysely's
 * FileMigrationProvider) so the files go through whatever loader runs this code: tsx in
 * processes, vite-node under vitest.
 */
async function loadMigrationFolder(folder: string): Promise<Record<string, Migration>> {
  const migrations: Record<string, Migration> = {};
  for (const file of migrationFiles(await fs.readdir(folder))) {
    const mod = await import(pathToFileURL(path.join(folder, file)).href);
    const migration = (mod.default ?? mod) as Migration;
    if (typeof migration.up !== "function") throw new Error(`migration ${file} exports no up()`);
    migrations[migrationName(file)] = migration;
  }
  return migrations;
}
