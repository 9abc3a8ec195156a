import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFreshDatabase } from "../../../test/infra/databases.js";
import { migrateSchema, openDatabase, sql, type DatabaseHandle } from "../src/db/index.js";
import { assertSearchPath, searchPathOption, searchPathPoolConfig } from "../src/db/search-path.js";
import { openServiceTestDatabase } from "../src/testing/index.js";

describe("the search_path startup option (DATABASE_SCHEMA_SEARCH_PATH)", () => {
  it("puts the schema, quoted as an identifier, before public", () => {
    expect(searchPathOption("ledger")).toBe('-c search_path="ledger",public');
    expect(searchPathOption("user")).toBe('-c search_path="user",public'); // a reserved word stays a name
  });

  it("refuses what is not a plain schema name (it travels inside a startup option)", () => {
    for (const bad of ["", "Ledger", "a b", 'a"b', "a,public", "a\\ b", "-c", "1abc", "x".repeat(64)]) {
      expect(() => searchPathOption(bad), bad).toThrow(/not a schema name/);
    }
  });

  it("keeps the URL's own options and puts ours last, where they win", () => {
    const fromUrl = searchPathPoolConfig("postgres://u:p%40ss@h:5432/db?options=-c%20statement_timeout%3D5000&sslmode=disable", "ledger");
    expect(fromUrl.options).toBe('-c statement_timeout=5000 -c search_path="ledger",public');
    expect(new URL(fromUrl.connectionString).searchParams.has("options")).toBe(false);
    expect(new URL(fromUrl.connectionString).searchParams.get("sslmode")).toBe("disable");
    expect(new URL(fromUrl.connectionString).password).toBe("p%40ss");

    const plain = "postgres://u@h/db";
    expect(searchPathPoolConfig(plain, "ledger")).toEqual({ connectionString: plain, options: '-c search_path="ledger",public' });
  });
});

describe.skipIf(!process.env.DATABASE_URL)("a Postgres pool that serves one schema", () => {
  let fresh: { url: string; drop(): Promise<void> };
  let admin: DatabaseHandle;
  const opened: DatabaseHandle[] = [];
  const open = async (opts: { searchPathSchema?: string; databaseUrl?: string } = {}) => {
    const db = await openDatabase({ databaseUrl: opts.databaseUrl ?? fresh.url, poolSize: 3, preparedStatements: true, ...(opts.searchPathSchema ? { searchPathSchema: opts.searchPathSchema } : {}) });
    opened.push(db);
    return db;
  };
  const sqlState = (p: Promise<unknown>) => p.then(() => "resolved", (err: { code?: string }) => err.code);

  beforeAll(async () => {
    fresh = await createFreshDatabase(process.env.DATABASE_URL!, "corridor_t_searchpath");
    admin = await openDatabase({ databaseUrl: fresh.url, poolSize: 1 });
    await sql`create schema svc_a`.execute(admin.root);
    await sql`create schema svc_b`.execute(admin.root);
    await sql`create table svc_a.items (id int primary key, name text not null)`.execute(admin.root);
    await sql`create table svc_b.secrets (id int primary key)`.execute(admin.root);
    await sql`insert into svc_a.items values (1, 'a1')`.execute(admin.root);
    await sql`insert into svc_b.secrets values (7)`.execute(admin.root);
    opened.push(admin);
  });
  afterAll(async () => {
    for (const db of opened) await db.close();
    await fresh?.drop();
  });

  it("runs its own schema's queries unqualified, on every connection of the pool", async () => {
    const db = await open({ searchPathSchema: "svc_a" });
    expect(db.searchPathSchema).toBe("svc_a");
    const own = db.forSchema<any>("svc_a");
    expect(own).toBe(db.root); // no WithSchemaPlugin
    expect(own.selectFrom("items").select("name").where("id", "=", 1).compile().sql).toBe('select "name" from "items" where "id" = $1');

    await own.insertInto("items").values({ id: 2, name: "a2" }).execute();
    expect((await sql<{ n: number }>`select count(*)::int as n from svc_a.items`.execute(admin.root)).rows[0]!.n).toBe(2);
    expect(await own.selectFrom("items").select("name").orderBy("id").execute()).toEqual([{ name: "a1" }, { name: "a2" }]);

    // Three transactions at once hold three connections: each started on the schema's search_path.
    let entered = 0;
    let release!: () => void;
    const allIn = new Promise<void>((r) => (release = r));
    const seen = await Promise.all(
      [0, 1, 2].map(() =>
        own.transaction().execute(async (trx) => {
          const row = (await sql<{ pid: number; schema: string; path: string }>`select pg_backend_pid() as pid, current_schema() as schema, current_setting('search_path') as path`.execute(trx)).rows[0]!;
          if (++entered === 3) release();
          await allIn;
          return row;
        }),
      ),
    );
    expect(new Set(seen.map((r) => r.pid)).size).toBe(3);
    for (const r of seen) expect([r.schema, r.path]).toEqual(["svc_a", '"svc_a",public']);
  });

  it("cannot see another service's table unqualified; forSchema(other) stays qualified", async () => {
    const db = await open({ searchPathSchema: "svc_a" });
    expect(await sqlState(db.forSchema<any>("svc_a").selectFrom("secrets").selectAll().execute())).toBe("42P01");
    const other = db.forSchema<any>("svc_b");
    expect(other.selectFrom("secrets").selectAll().compile().sql).toBe('select * from "svc_b"."secrets"');
    expect(await other.selectFrom("secrets").selectAll().execute()).toEqual([{ id: 7 }]);
  });

  it("with the setting off, everything is qualified as before and bare names find nothing", async () => {
    const db = await open();
    expect(db.searchPathSchema).toBeUndefined();
    const own = db.forSchema<any>("svc_a");
    expect(own).not.toBe(db.root);
    expect(own.selectFrom("items").select("name").where("id", "=", 1).compile().sql).toBe('select "name" from "svc_a"."items" where "id" = $1');
    expect(await own.selectFrom("items").select("name").where("id", "=", 1).execute()).toEqual([{ name: "a1" }]);
    expect((await sql<{ schema: string }>`select current_schema() as schema`.execute(db.root)).rows[0]!.schema).toBe("public");
    expect(await sqlState(db.root.selectFrom("items").selectAll().execute())).toBe("42P01");
  });

  it("keeps options given in the URL alongside the search_path", async () => {
    const url = new URL(fresh.url);
    url.searchParams.set("options", "-c statement_timeout=4321");
    const db = await open({ databaseUrl: url.toString(), searchPathSchema: "svc_a" });
    const row = (await sql<{ t: string; schema: string }>`select current_setting('statement_timeout') as t, current_schema() as schema`.execute(db.root)).rows[0]!;
    expect(row).toEqual({ t: "4321ms", schema: "svc_a" });
  });

  it("the hosts' start check passes on a search_path pool and refuses a connection without it (a pooler that dropped the option)", async () => {
    await expect(assertSearchPath((await open({ searchPathSchema: "svc_a" })).root, "svc_a")).resolves.toBeUndefined();
    await expect(assertSearchPath((await open()).root, "svc_a")).rejects.toThrow(/DATABASE_SCHEMA_SEARCH_PATH=false/);
  });

  it("refuses a schema name it cannot put on the search_path", async () => {
    await expect(open({ searchPathSchema: "svc_a,svc_b" })).rejects.toThrow(/not a schema name/);
  });

  it("migrates into the service schema, created after the pool's first connection", async () => {
    const db = await open({ searchPathSchema: "svc_new" });
    // The connection opens before the schema exists (a service's first start): bare names find nothing yet.
    expect((await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db.root)).rows[0]!.schema).toBe("public");
    await migrateSchema(db, "svc_new", "/nonexistent-migrations-folder");
    const where = await sql<{ table_schema: string; table_name: string }>`select table_schema, table_name from information_schema.tables where table_name in ('outbox', 'inbox', 'idempotency_keys', 'kysely_migration') order by 1, 2`.execute(admin.root);
    expect(where.rows).toEqual(["idempotency_keys", "inbox", "kysely_migration", "outbox"].map((table_name) => ({ table_schema: "svc_new", table_name })));
    // The same connections now find the schema first on their search_path.
    expect(await db.forSchema<any>("svc_new").selectFrom("outbox").select("id").execute()).toEqual([]);
    expect((await sql<{ schema: string }>`select current_schema() as schema`.execute(db.root)).rows[0]!.schema).toBe("svc_new");
  });
});

describe.skipIf(!process.env.DATABASE_URL)("openServiceTestDatabase follows DATABASE_SCHEMA_SEARCH_PATH", () => {
  const service = { schema: "svc_test", migrationsDir: "/nonexistent-migrations-folder" };
  const withSetting = async (value: string | undefined) => {
    const before = process.env.DATABASE_SCHEMA_SEARCH_PATH;
    if (value === undefined) delete process.env.DATABASE_SCHEMA_SEARCH_PATH;
    else process.env.DATABASE_SCHEMA_SEARCH_PATH = value;
    try {
      const { db, drop } = await openServiceTestDatabase(service);
      try {
        const bare = await db.root.selectFrom("outbox").select("id").execute().then(() => "found", (err: { code?: string }) => err.code);
        return { searchPathSchema: db.searchPathSchema, bare };
      } finally {
        await drop();
      }
    } finally {
      if (before === undefined) delete process.env.DATABASE_SCHEMA_SEARCH_PATH;
      else process.env.DATABASE_SCHEMA_SEARCH_PATH = before;
    }
  };

  it("on by default: the service schema's bare names", async () => {
    expect(await withSetting(undefined)).toEqual({ searchPathSchema: "svc_test", bare: "found" });
  });

  it("off: qualified as before", async () => {
    expect(await withSetting("false")).toEqual({ searchPathSchema: undefined, bare: "42P01" });
  });
});
