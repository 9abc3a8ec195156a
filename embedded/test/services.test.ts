import { migrateSchema, openDatabase, sql, type DatabaseHandle } from "@corridor/kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allServices } from "../src/modules.js";

// Every service, as the hosts see it: a consistent name/schema and migrations that can run on
// every restart (twice in a row changes nothing and fails nothing).
describe.each(allServices.map((s) => [s.name, s] as const))("service module %s", (name, service) => {
  let db: DatabaseHandle;
  beforeAll(async () => {
    db = await openDatabase({});
  });
  afterAll(async () => db.close());

  it("names a snake_case schema of its own after the service", () => {
    expect(service.schema).toBe(name.replace(/-/g, "_"));
  });

  it("migrates its schema, and migrating again is a no-op", async () => {
    await migrateSchema(db, service.schema, service.migrationsDir);
    await migrateSchema(db, service.schema, service.migrationsDir);
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from information_schema.tables where table_schema = ${service.schema} and table_name in ('outbox', 'inbox')
    `.execute(db.root);
    expect(rows[0]?.n).toBe(2);
  });
});
