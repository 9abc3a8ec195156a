import { readdirSync } from "node:fs";
import { createLogger, migrateSchema, openDatabase, sql, systemClock, type Bus, type DatabaseHandle } from "@corridor/kit";
import { register } from "tsx/esm/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { service } from "../src/server.js";

const noBus: Bus = {
  kind: "in-process",
  publish: async () => undefined,
  subscribe: async () => ({ close: async () => undefined }),
  close: async () => undefined,
};

// PGlite in memory whatever DATABASE_URL says: what is proven here (the module's wiring) does
// not depend on the server.
describe("customers-kyc service module", () => {
  let db: DatabaseHandle;
  beforeAll(async () => {
    register();
    db = await openDatabase({});
  });
  afterAll(async () => db.close());

  it("migrates its schema, and again as every restart does", async () => {
    expect(readdirSync(service.migrationsDir).filter((f) => f.endsWith(".ts")).length).toBeGreaterThan(0);
    await migrateSchema(db, service.schema, service.migrationsDir);
    await migrateSchema(db, service.schema, service.migrationsDir);
    const { rows } = await sql<{ table_name: string }>`
      select table_name from information_schema.tables where table_schema = ${service.schema} order by table_name
    `.execute(db.root);
    expect(rows.map((r) => r.table_name)).toEqual(expect.arrayContaining(["beneficial_owners", "customers", "invitations", "outbox", "verifications"]));
  });

  it("builds with its one consumer (corridor.platforms.v1: default UMA addresses) and its bulk import worker, and rejects a bad invitation base URL at start", async () => {
    const deps = {
      db,
      bus: noBus,
      clock: systemClock,
      log: createLogger("customers-kyc-test", "silent"),
      transportFor: () => {
        throw new Error("no calls expected");
      },
    };
    const built = await service.build({ ...deps, env: {} });
    expect(service).toMatchObject({ name: "customers-kyc", schema: "customers_kyc" });
    expect(built.consumers.map((c) => [c.name, c.topic])).toEqual([["customer-uma-addresses", "corridor.platforms.v1"]]);
    expect(built.workers.map((w) => w.name)).toEqual(["customer-imports"]);
    expect(() => service.build({ ...deps, env: { CORRIDOR_INVITATION_BASE_URL: "not a url" } })).toThrow(/CORRIDOR_INVITATION_BASE_URL/);
  });
});
