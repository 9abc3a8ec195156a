import { CamelCasePlugin, sql, type ColumnType, type Kysely, type KyselyPlugin } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixedShapeQuery, openDatabase, type DatabaseHandle } from "../src/db/index.js";
import { databaseKinds, openTestDatabase } from "./db-fixture.js";

interface Tables {
  notes: { id: bigint; owner: string; body: string; created_at: ColumnType<Date, Date | undefined, never> };
}

/** Every statement sent through `db`, as compiled, and how many results came back. */
function recording(db: Kysely<any>) {
  const texts: string[] = [];
  let results = 0;
  const plugin: KyselyPlugin = {
    transformQuery: ({ node, queryId }) => {
      texts.push(db.getExecutor().compileQuery(node, queryId).sql);
      return node;
    },
    transformResult: async ({ result }) => {
      results++;
      return result;
    },
  };
  return { db: db.withPlugin(plugin), texts, results: () => results };
}

async function createNotes(handle: DatabaseHandle, schema: string): Promise<void> {
  await sql`create schema if not exists ${sql.id(schema)}`.execute(handle.root);
  await sql`create table ${sql.id(schema, "notes")} (id int8 primary key, owner text not null, body text not null, created_at timestamptz not null default now())`.execute(handle.root);
}

// The queries as the kit writes them: module-level, built once per handle and plugin set.
const notesOf = fixedShapeQuery((db: Kysely<Tables>, a: { owner: string; after: bigint }) =>
  db.selectFrom("notes").select(["id", "owner", "body"]).where("owner", "=", a.owner).where("id", ">", a.after).orderBy("id"),
);
const insertNote = fixedShapeQuery((db: Kysely<Tables>, a: { id: bigint; owner: string; body: string }) =>
  db.insertInto("notes").values({ id: a.id, owner: a.owner, body: a.body }).returning(["id", "body"]),
);
// A multi-row insert: its number of rows is the variant.
const insertNotes = fixedShapeQuery((db: Kysely<Tables>, a: { rows: { id: bigint; owner: string; body: string }[] }, n: number) =>
  db
    .insertInto("notes")
    .values(Array.from({ length: n }, (_, i) => ({ id: a.rows[i]!.id, owner: a.rows[i]!.owner, body: a.rows[i]!.body })))
    .returning("id"),
);

describe.each(databaseKinds)("fixedShapeQuery on $kind", ({ kind, skip }) => {
  let handle: DatabaseHandle;
  let dispose: () => Promise<void>;
  let db: Kysely<Tables>;

  beforeAll(async () => {
    if (skip) return;
    ({ handle, dispose } = await openTestDatabase(kind));
    await createNotes(handle, "fixed_a");
    await createNotes(handle, "fixed_b");
    db = handle.forSchema<Tables>("fixed_a");
    for (const [id, owner, body] of [
      [1n, "ann", "first"],
      [2n, "bob", "second"],
      [3n, "ann", "third"],
    ] as const) {
      await db.insertInto("notes").values({ id, owner, body }).execute();
    }
    await handle.forSchema<Tables>("fixed_b").insertInto("notes").values({ id: 1n, owner: "ann", body: "in schema b" }).execute();
  });
  afterAll(async () => {
    if (!skip) await dispose();
  });

  it.skipIf(skip)("answers the rows the uncached query answers, for each call's own values", async () => {
    const uncached = (owner: string, after: bigint) => db.selectFrom("notes").select(["id", "owner", "body"]).where("owner", "=", owner).where("id", ">", after).orderBy("id").execute();
    expect((await notesOf.execute(db, { owner: "ann", after: 0n })).rows).toEqual(await uncached("ann", 0n));
    // The second call's values, not the first's: other rows.
    expect((await notesOf.execute(db, { owner: "bob", after: 0n })).rows).toEqual([{ id: 2n, owner: "bob", body: "second" }]);
    expect((await notesOf.execute(db, { owner: "ann", after: 1n })).rows).toEqual(await uncached("ann", 1n));
    expect((await notesOf.execute(db, { owner: "nobody", after: 0n })).rows).toEqual([]);
  });

  it.skipIf(skip)("compiles once per handle and plugin set, and every plugin still sees each execution and its result", async () => {
    const r = recording(db);
    for (const owner of ["ann", "bob", "ann"]) await notesOf.execute(r.db, { owner, after: 0n });
    expect(r.results()).toBe(3);
    expect(r.texts).toHaveLength(3);
    expect(new Set(r.texts).size).toBe(1);
    expect(r.texts[0]).toMatch(/^select "id", "owner", "body" from .*"notes" where "owner" = \$1 and "id" > \$2 order by "id"$/);
  });

  it.skipIf(skip)("builds a query once per schema handle, its transactions included, not once per call", async () => {
    let builds = 0;
    const counted = fixedShapeQuery((k: Kysely<Tables>, a: { owner: string }) => {
      builds++;
      return k.selectFrom("notes").select("body").where("owner", "=", a.owner);
    });
    for (const owner of ["ann", "bob", "ann"]) await counted.execute(db, { owner });
    await db.transaction().execute((trx) => counted.execute(trx, { owner: "bob" }));
    expect(builds).toBe(1);
    const b = handle.forSchema<Tables>("fixed_b");
    await counted.execute(b, { owner: "ann" });
    await counted.execute(b, { owner: "bob" });
    expect(builds).toBe(2);
  });

  it.skipIf(skip)("runs on the transaction it is given: seen inside before the commit, gone after a rollback", async () => {
    await expect(
      db.transaction().execute(async (trx) => {
        expect((await insertNote.execute(trx, { id: 10n, owner: "cyd", body: "rolled back" })).rows).toEqual([{ id: 10n, body: "rolled back" }]);
        expect((await notesOf.execute(trx, { owner: "cyd", after: 0n })).rows).toHaveLength(1);
        throw new Error("roll back");
      }),
    ).rejects.toThrow("roll back");
    expect((await notesOf.execute(db, { owner: "cyd", after: 0n })).rows).toEqual([]);
    await db.transaction().execute(async (trx) => {
      await insertNote.execute(trx, { id: 11n, owner: "cyd", body: "kept" });
    });
    expect((await notesOf.execute(db, { owner: "cyd", after: 0n })).rows.map((r) => r.body)).toEqual(["kept"]);
  });

  it.skipIf(skip)("targets each handle's own schema: a query compiled for one schema never runs on another", async () => {
    const b = handle.forSchema<Tables>("fixed_b");
    // Alternating, so a cache that ignored the schema would answer one schema's rows for the other.
    expect((await notesOf.execute(db, { owner: "ann", after: 0n })).rows.map((r) => r.body)).toEqual(["first", "third"]);
    expect((await notesOf.execute(b, { owner: "ann", after: 0n })).rows.map((r) => r.body)).toEqual(["in schema b"]);
    expect((await notesOf.execute(db, { owner: "ann", after: 0n })).rows.map((r) => r.body)).toEqual(["first", "third"]);
    await b.transaction().execute(async (trx) => {
      expect((await notesOf.execute(trx, { owner: "ann", after: 0n })).rows.map((r) => r.body)).toEqual(["in schema b"]);
    });
    const texts = recording(b);
    await notesOf.execute(texts.db, { owner: "ann", after: 0n });
    expect(texts.texts[0]).toContain(kind === "pglite" ? `from "fixed_b"."notes"` : `"fixed_b"."notes"`);
  });

  it.skipIf(skip)("keeps a variant per shape: multi-row inserts of different lengths", async () => {
    const rows = (from: number, n: number) => Array.from({ length: n }, (_, i) => ({ id: BigInt(from + i), owner: "dee", body: `row ${from + i}` }));
    expect((await insertNotes.execute(db, { rows: rows(100, 2) }, 2)).rows).toEqual([{ id: 100n }, { id: 101n }]);
    expect((await insertNotes.execute(db, { rows: rows(200, 3) }, 3)).rows).toEqual([{ id: 200n }, { id: 201n }, { id: 202n }]);
    expect((await insertNotes.execute(db, { rows: rows(300, 2) }, 2)).rows).toEqual([{ id: 300n }, { id: 301n }]);
    expect((await notesOf.execute(db, { owner: "dee", after: 0n })).rows.map((r) => r.id)).toEqual([100n, 101n, 200n, 201n, 202n, 300n, 301n]);
  });

  it.skipIf(skip)("runs a plugin's result transformation (CamelCasePlugin) and its query transformation", async () => {
    const camel = db.withPlugin(new CamelCasePlugin()) as unknown as Kysely<{ notes: { id: bigint; owner: string; body: string; createdAt: ColumnType<Date, Date | undefined, never> } }>;
    const recent = fixedShapeQuery((k: typeof camel, a: { id: bigint }) => k.selectFrom("notes").select(["id", "createdAt"]).where("id", "=", a.id));
    const first = (await recent.execute(camel, { id: 1n })).rows;
    const second = (await recent.execute(camel, { id: 2n })).rows;
    expect(first).toEqual([{ id: 1n, createdAt: expect.any(Date) }]);
    expect(second).toEqual([{ id: 2n, createdAt: expect.any(Date) }]);
  });
});

describe("fixedShapeQuery across databases and misuse", () => {
  const handles: DatabaseHandle[] = [];
  afterAll(async () => {
    for (const h of handles) await h.close();
  });

  it("keeps two database handles on one schema name apart", async () => {
    for (const body of ["database one", "database two"]) {
      const h = await openDatabase({});
      handles.push(h);
      await createNotes(h, "fixed_same");
      await h.forSchema<Tables>("fixed_same").insertInto("notes").values({ id: 1n, owner: "ann", body }).execute();
    }
    const [one, two] = handles.map((h) => h.forSchema<Tables>("fixed_same"));
    expect((await notesOf.execute(one!, { owner: "ann", after: 0n })).rows.map((r) => r.body)).toEqual(["database one"]);
    expect((await notesOf.execute(two!, { owner: "ann", after: 0n })).rows.map((r) => r.body)).toEqual(["database two"]);
    expect((await notesOf.execute(one!, { owner: "ann", after: 0n })).rows.map((r) => r.body)).toEqual(["database one"]);
    // Two PGlite starts: slow on a loaded machine.
  }, 120_000);

  it("refuses a builder that computes with an argument instead of passing it to Kysely", async () => {
    const h = handles[0]!;
    const computing = fixedShapeQuery((db: Kysely<Tables>, a: { id: bigint }) => db.selectFrom("notes").selectAll().where("id", "=", a.id + 1n));
    await expect(computing.execute(h.forSchema<Tables>("fixed_same"), { id: 1n })).rejects.toThrow(/argument id was used as a value/);
    const formatting = fixedShapeQuery((db: Kysely<Tables>, a: { owner: string }) => db.selectFrom("notes").selectAll().where("owner", "=", `${a.owner}!`));
    await expect(formatting.execute(h.forSchema<Tables>("fixed_same"), { owner: "ann" })).rejects.toThrow(/argument owner was used as a value/);
  });
});
