import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { createFreshDatabase, createTemplateDatabase, TEMPLATE_DB_ENV } from "./databases.js";

const baseUrl = process.env.DATABASE_URL;

async function query<T>(url: string, text: string): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(text)).rows as T[];
  } finally {
    await c.end();
  }
}

describe.skipIf(!baseUrl)("test databases copied from a migrated template", () => {
  const cleanups: (() => Promise<void>)[] = [];
  const saved = process.env[TEMPLATE_DB_ENV];
  afterAll(async () => {
    if (saved === undefined) delete process.env[TEMPLATE_DB_ENV];
    else process.env[TEMPLATE_DB_ENV] = saved;
    for (const c of cleanups.reverse()) await c();
  });

  it("gives every migrated copy the template's tables, and leaves plain fresh databases empty", async () => {
    const template = await createTemplateDatabase(baseUrl!, (url) => query(url, "create schema svc; create table svc.t (id int); insert into svc.t values (1)").then(() => undefined));
    cleanups.push(template.drop);
    process.env[TEMPLATE_DB_ENV] = template.name;

    const [a, b] = await Promise.all([createFreshDatabase(baseUrl!, "corridor_t_copy", { migrated: true }), createFreshDatabase(baseUrl!, "corridor_t_copy", { migrated: true })]);
    cleanups.push(a.drop, b.drop);
    expect(await query(a.url, "select id from svc.t")).toEqual([{ id: 1 }]);
    await query(a.url, "insert into svc.t values (2)");
    expect(await query(b.url, "select id from svc.t")).toEqual([{ id: 1 }]); // copies are independent

    const plain = await createFreshDatabase(baseUrl!, "corridor_t_plain");
    cleanups.push(plain.drop);
    expect(await query(plain.url, "select 1 from information_schema.schemata where schema_name = 'svc'")).toEqual([]);
  });
});
