import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertSchemaMigrated, migrateSchema, sql, type DatabaseHandle } from "../src/db/index.js";
import { openTestDatabase } from "./db-fixture.js";

// migrateSchema skips the migrator when the schema already lists exactly the known migrations;
// these check that the shortcut never skips work, nor hides a recorded migration that is gone.
describe("migrateSchema", () => {
  let handle: DatabaseHandle;
  let dispose: () => Promise<void>;
  let folder: string;
  const migration = (name: string, table: string) =>
    writeFileSync(join(folder, `${name}.mjs`), `export async function up(db) { await db.schema.createTable(${JSON.stringify(table)}).addColumn("id", "integer").execute(); }\n`);
  const recorded = async (schema: string) =>
    (await sql<{ name: string }>`select name from ${sql.id(schema, "kysely_migration")} order by name`.execute(handle.root)).rows.map((r) => r.name);

  beforeAll(async () => {
    ({ handle, dispose } = await openTestDatabase("pglite"));
    folder = mkdtempSync(join(tmpdir(), "kit-migrations-"));
  });
  afterAll(async () => {
    await dispose();
    rmSync(folder, { recursive: true, force: true });
  });

  it("runs migrations added after the schema was last migrated, and leaves an up-to-date schema as it is", async () => {
    migration("20250101000000_first", "first");
    await migrateSchema(handle, "mig_a", folder);
    const afterFirst = await recorded("mig_a");
    expect(afterFirst).toContain("20250101000000_first");

    await migrateSchema(handle, "mig_a", folder); // up to date: nothing changes
    expect(await recorded("mig_a")).toEqual(afterFirst);

    migration("20250102000000_second", "second");
    await migrateSchema(handle, "mig_a", folder);
    expect(await recorded("mig_a")).toEqual([...afterFirst, "20250102000000_second"].sort());
    const tables = await sql<{ table_name: string }>`select table_name from information_schema.tables where table_schema = 'mig_a'`.execute(handle.root);
    expect(tables.rows.map((r) => r.table_name)).toEqual(expect.arrayContaining(["first", "second"]));
  });

  it("still fails when a migration the schema recorded no longer exists", async () => {
    await migrateSchema(handle, "mig_b", folder);
    await sql`insert into ${sql.id("mig_b", "kysely_migration")} (name, timestamp) values ('20240101000000_gone', '2024-01-01T00:00:00.000Z')`.execute(handle.root);
    await expect(migrateSchema(handle, "mig_b", folder)).rejects.toThrow(/migrating schema mig_b failed/);
  });

  it("assertSchemaMigrated (CORRIDOR_MIGRATE_ON_START=false) refuses a schema missing a known migration, accepts one a newer release migrated further", async () => {
    const own = mkdtempSync(join(tmpdir(), "kit-migrations-verify-"));
    try {
      writeFileSync(join(own, "20250101000000_first.mjs"), `export async function up(db) { await db.schema.createTable("first").addColumn("id", "integer").execute(); }\n`);
      // Never migrated: refused, naming what is missing and how to run it; nothing is created.
      await expect(assertSchemaMigrated(handle, "mig_c", own)).rejects.toThrow(/schema mig_c lacks \d+ migration\(s\).*CORRIDOR_MIGRATE_ONLY=true/);
      const schemas = await sql<{ n: number }>`select count(*)::int as n from information_schema.schemata where schema_name = 'mig_c'`.execute(handle.root);
      expect(schemas.rows[0]!.n).toBe(0);
      await migrateSchema(handle, "mig_c", own);
      await assertSchemaMigrated(handle, "mig_c", own);
      // The code gains a migration the Job has not run yet: refused, naming it.
      writeFileSync(join(own, "20250102000000_second.mjs"), `export async function up(db) { await db.schema.createTable("second").addColumn("id", "integer").execute(); }\n`);
      await expect(assertSchemaMigrated(handle, "mig_c", own)).rejects.toThrow(/20250102000000_second/);
      await migrateSchema(handle, "mig_c", own);
      await assertSchemaMigrated(handle, "mig_c", own);
      // An older release's pod (which does not know the second migration) still starts on the newer schema.
      rmSync(join(own, "20250102000000_second.mjs"));
      await assertSchemaMigrated(handle, "mig_c", own);
    } finally {
      rmSync(own, { recursive: true, force: true });
    }
  });
});
