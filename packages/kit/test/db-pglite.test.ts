import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { gunzipSync, gzipSync } from "node:zlib";
import { PGLITE_SHARED_BUFFERS, openDatabase, sql, type DatabaseHandle } from "../src/db/index.js";

// PGlite starts with a smaller buffer pool than initdb's 128MB (memory), given as an extra start
// parameter: PGlite's own parameters stay, and it applies to a new and to an existing data folder.
describe("PGlite start parameters", () => {
  const dir = mkdtempSync(join(tmpdir(), "kit-pglite-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const settings = async (handle: DatabaseHandle) =>
    (
      await sql<{ name: string; setting: string }>`select name, current_setting(name) as setting from unnest(array['shared_buffers', 'fsync', 'synchronous_commit', 'full_page_writes', 'search_path', 'exit_on_error']) as name`.execute(handle.root)
    ).rows.reduce<Record<string, string>>((acc, r) => ({ ...acc, [r.name]: r.setting }), {});
  const expected = { shared_buffers: PGLITE_SHARED_BUFFERS, synchronous_commit: "on", full_page_writes: "on", search_path: "public", exit_on_error: "off" };

  it("uses the smaller buffer pool on a new data folder and again on reopening it, data intact", async () => {
    const first = await openDatabase({ dataDir: dir });
    try {
      expect(await settings(first)).toMatchObject(expected);
      await sql`create table kept (n int8)`.execute(first.root);
      await sql`insert into kept values (9007199254740993)`.execute(first.root);
    } finally {
      await first.close();
    }
    const again = await openDatabase({ dataDir: dir });
    try {
      expect(await settings(again)).toMatchObject(expected);
      expect((await sql<{ n: bigint }>`select n from kept`.execute(again.root)).rows).toEqual([{ n: 9007199254740993n }]);
    } finally {
      await again.close();
    }
  });

  it("keeps PGlite's durability settings as they are without the parameter (only the buffer pool differs)", async () => {
    const { PGlite } = await import("@electric-sql/pglite");
    const plain = await PGlite.create("memory://");
    const ours = await openDatabase({});
    try {
      const plainSettings = (await plain.query<{ fsync: string; synchronous_commit: string; full_page_writes: string; wal_level: string }>("select current_setting('fsync') as fsync, current_setting('synchronous_commit') as synchronous_commit, current_setting('full_page_writes') as full_page_writes, current_setting('wal_level') as wal_level")).rows[0];
      const ourSettings = (await sql<Record<string, string>>`select current_setting('fsync') as fsync, current_setting('synchronous_commit') as synchronous_commit, current_setting('full_page_writes') as full_page_writes, current_setting('wal_level') as wal_level`.execute(ours.root)).rows[0];
      expect(ourSettings).toEqual(plainSettings);
    } finally {
      await plain.close();
      await ours.close();
    }
  });
});

// A new data folder starts from the build's template (embedded/src/prepare-data.ts) instead of initdb.
describe("PGlite data template", () => {
  const dir = mkdtempSync(join(tmpdir(), "kit-pglite-template-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const template = join(dir, "template.tar.gz");

  it("starts a new data folder from the template, and an existing one from its own data", async () => {
    const source = await openDatabase({});
    try {
      await sql`create table from_template (n int8)`.execute(source.root);
      await sql`insert into from_template values (1)`.execute(source.root);
      writeFileSync(template, Buffer.from(await (await source.dumpDataDir!()).arrayBuffer()));
    } finally {
      await source.close();
    }

    const data = join(dir, "data");
    const first = await openDatabase({ dataDir: data, pgliteTemplate: template });
    try {
      expect((await sql<{ n: bigint }>`select n from from_template`.execute(first.root)).rows).toEqual([{ n: 1n }]);
      await sql`insert into from_template values (2)`.execute(first.root);
    } finally {
      await first.close();
    }
    // Reopened: the folder holds a database, so the template is not unpacked over it.
    const again = await openDatabase({ dataDir: data, pgliteTemplate: template });
    try {
      expect((await sql<{ n: bigint }>`select n from from_template order by n`.execute(again.root)).rows).toEqual([{ n: 1n }, { n: 2n }]);
    } finally {
      await again.close();
    }
  });

  it("leaves no database behind when the template is cut short, so the next start unpacks it again", async () => {
    const whole = gunzipSync(readFileSync(template));
    const cut = join(dir, "cut.tar.gz");
    writeFileSync(cut, gzipSync(whole.subarray(0, Math.floor(whole.length / 2))));
    const data = join(dir, "data-cut");
    await expect(openDatabase({ dataDir: data, pgliteTemplate: cut })).rejects.toThrow(/ends early/);
    expect(existsSync(join(data, "PG_VERSION"))).toBe(false);

    const retried = await openDatabase({ dataDir: data, pgliteTemplate: template });
    try {
      expect((await sql<{ n: bigint }>`select n from from_template`.execute(retried.root)).rows).toEqual([{ n: 1n }]);
    } finally {
      await retried.close();
    }
  });
});
