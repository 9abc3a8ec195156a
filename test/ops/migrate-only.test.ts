// The two settings the Helm chart's migrations Job relies on (docs/operations.md, "Migrations"),
// through a service's real entry point (services/<name>/src/main.ts → runStandalone) on real
// PostgreSQL: CORRIDOR_MIGRATE_ONLY=true migrates the schema and exits 0 without Kafka, Redis or a
// listener; CORRIDOR_MIGRATE_ON_START=false refuses to start on a schema that lacks a migration.
import { spawn } from "node:child_process";
import { resolve } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFreshDatabase } from "../infra/databases.js";

const root = resolve(import.meta.dirname, "../..");
const skip = process.env.DATABASE_URL ? "" : "DATABASE_URL is not set (needs a real PostgreSQL)";
if (skip && process.env.CI === "true") throw new Error(`migrate-only suite cannot run in CI: ${skip}`);

/** Runs a service's entry point under tsx with `env`, and resolves with its exit code and output. */
function runService(name: string, env: Record<string, string>, timeoutMs = 90_000): Promise<{ code: number | null; output: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ["--import", "tsx", resolve(root, "services", name, "src", "main.ts")], {
      cwd: root,
      // Nothing but what the test gives: no KAFKA_BROKERS, REDIS_URL or ports of the run's environment.
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", LOG_LEVEL: "info", PORT: "0", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (d) => (output += String(d)));
    child.stderr.on("data", (d) => (output += String(d)));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      fail(new Error(`${name} did not exit within ${timeoutMs} ms:\n${output}`));
    }, timeoutMs);
    child.on("exit", (code) => {
      clearTimeout(timer);
      done({ code, output });
    });
  });
}

async function migrations(url: string, schema: string): Promise<string[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const present = await c.query<{ t: string | null }>("select to_regclass($1) as t", [`${schema}.kysely_migration`]);
    if (!present.rows[0]!.t) return [];
    return (await c.query<{ name: string }>(`select name from "${schema}".kysely_migration order by name`)).rows.map((r) => r.name);
  } finally {
    await c.end();
  }
}

describe.skipIf(!!skip)("CORRIDOR_MIGRATE_ONLY and CORRIDOR_MIGRATE_ON_START (the chart's migrations Job)", () => {
  let db: { url: string; drop(): Promise<void> };
  beforeAll(async () => {
    db = await createFreshDatabase(process.env.DATABASE_URL!, "corridor_migrate_only");
  });
  afterAll(async () => db?.drop());

  it("a service told not to migrate refuses to start on a schema that lacks its migrations, and creates nothing", async () => {
    const res = await runService("sandbox", { DATABASE_URL: db.url, CORRIDOR_MIGRATE_ON_START: "false" });
    expect(res.code, res.output).not.toBe(0);
    expect(res.output).toMatch(/schema sandbox lacks \d+ migration\(s\)/);
    expect(res.output).toMatch(/CORRIDOR_MIGRATE_ONLY=true/);
    expect(await migrations(db.url, "sandbox")).toEqual([]);
  }, 120_000);

  it("CORRIDOR_MIGRATE_ONLY=true migrates the service's schema and exits 0, with no Kafka, Redis or listener", async () => {
    const res = await runService("sandbox", { DATABASE_URL: db.url, CORRIDOR_MIGRATE_ONLY: "true" });
    expect(res.code, res.output).toBe(0);
    expect(res.output).toMatch(/migrations done \(CORRIDOR_MIGRATE_ONLY\); exiting/);
    expect(res.output).not.toMatch(/sandbox listening/);
    const done = await migrations(db.url, "sandbox");
    expect(done.length).toBeGreaterThan(0);
    // Again: nothing left to do, still 0, nothing new recorded.
    const again = await runService("sandbox", { DATABASE_URL: db.url, CORRIDOR_MIGRATE_ONLY: "true" });
    expect(again.code, again.output).toBe(0);
    expect(await migrations(db.url, "sandbox")).toEqual(done);
  }, 200_000);

  it("CORRIDOR_MIGRATE_ONLY exits 1 when the database cannot be reached", async () => {
    const unreachable = new URL(db.url);
    unreachable.port = "1"; // nothing listens on port 1
    const res = await runService("sandbox", { DATABASE_URL: unreachable.toString(), CORRIDOR_MIGRATE_ONLY: "true", DATABASE_CONNECT_TIMEOUT_MS: "2000" });
    expect(res.code, res.output).toBe(1);
    expect(res.output).toMatch(/migrations failed \(CORRIDOR_MIGRATE_ONLY\)/);
  }, 120_000);
});
