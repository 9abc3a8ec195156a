import { randomUUID } from "node:crypto";
import { createClient } from "@connectrpc/connect";
import { createProcessLogger } from "@corridor/kit";
import { startEmbedded, type EmbeddedSystem } from "@corridor/embedded";
import { PlatformAdminService } from "@corridor/proto/corridor/auth_sessions/v1/platform_admin_service_pb.js";
import { Environment } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { createFreshDatabase } from "../infra/databases.js";
import { eventually, type ApiResponse } from "./harness.js";

/**
 * Issue 23, finding 1 and 2: PostgreSQL terminating the system's connections (what a restart or a
 * failover does to them; here pg_terminate_backend on every backend of the system's database,
 * while money requests are in flight) must not kill the process, must answer 503 with Retry-After
 * (never 500) to the requests it breaks, and must leave the system serving again by itself; the
 * retry of each broken request with its Idempotency-Key then has its effect exactly once. Runs
 * with its own embedded system (in this process, so a crash would fail this file) on a database of
 * its own; excluded from the split project (vitest.config.ts), whose processes are shared.
 */
describe.skipIf(!process.env.DATABASE_URL)("lost database connections", () => {
  let fresh: Awaited<ReturnType<typeof createFreshDatabase>> | undefined;
  let system: EmbeddedSystem | undefined;
  let killer: pg.Client | undefined;

  afterAll(async () => {
    await killer?.end();
    await system?.stop();
    await fresh?.drop();
  });

  it("answers 200 or 503 with Retry-After (never 500) while its connections are terminated, serves again by itself, and a retry with the same key funds once", async () => {
    fresh = await createFreshDatabase(process.env.DATABASE_URL!, "corridor_e2e", { migrated: true });
    system = await startEmbedded({ log: createProcessLogger("e2e-connections", "fatal"), databaseUrl: fresh.url, preparedStatements: true, httpHost: "127.0.0.1", httpPort: 0 });
    const admin = createClient(PlatformAdminService, system.transportFor("auth-sessions"));
    const created = await admin.createPlatform({ name: "connections", environment: Environment.SANDBOX });
    const auth = `Basic ${Buffer.from(`${created.token!.clientId}:${created.clientSecret}`).toString("base64")}`;
    const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiResponse> => {
      const res = await fetch(`${system!.url}/2025-10-13${path}`, {
        method,
        body: body === undefined ? undefined : JSON.stringify(body),
        headers: { authorization: auth, ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
      });
      const text = await res.text();
      return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
    };
    const usd = await eventually(async () => (await call("GET", "/platform/internal-accounts?currency=USD")).body?.data?.[0]);
    const fund = (key: string) => call("POST", `/sandbox/internal-accounts/${usd.id}/fund`, { amount: 1 }, { "idempotency-key": key });

    killer = new pg.Client({ connectionString: fresh.url });
    await killer.connect();
    const terminateAll = () => killer!.query("select count(pg_terminate_backend(pid)) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()");

    const keys: string[] = [];
    const answers: ApiResponse[] = [];
    for (let wave = 0; wave < 4; wave++) {
      const batch = Array.from({ length: 10 }, () => `conn-${randomUUID()}`);
      keys.push(...batch);
      const inFlight = batch.map((k) => fund(k));
      // Every connection of the system goes, pooled ones (idle or checked out) and the LISTEN one.
      await terminateAll();
      answers.push(...(await Promise.all(inFlight)));
    }
    for (const a of answers) {
      expect([200, 503], JSON.stringify(a.body)).toContain(a.status);
      if (a.status === 503) expect(Number(a.headers.get("retry-after"))).toBeGreaterThan(0);
    }

    // Serving again by itself; each key's retry answers the one funding (stored, or made now). A
    // key whose holder lost its connection mid-release answers 409 IDEMPOTENCY_KEY_IN_USE until
    // its 30 s lease runs out.
    for (const k of keys) await eventually(async () => ((await fund(k)).status === 200 ? true : undefined), 45_000);
    const balance = (await call("GET", "/platform/internal-accounts?currency=USD")).body.data[0].balance.amount;
    expect(balance).toBe(keys.length);
  }, 180_000);
});
