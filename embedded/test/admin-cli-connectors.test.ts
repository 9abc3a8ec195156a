import { execFile } from "node:child_process";
import { resolve } from "node:path";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { appErrorInterceptor, createLogger, serveConnect, systemClock } from "@corridor/kit";
import { PlatformAdminService } from "@corridor/proto/corridor/auth_sessions/v1/platform_admin_service_pb.js";
import { ConnectorAdminService } from "@corridor/proto/corridor/connector/v1/connector_admin_service_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFreshDatabase } from "../../test/infra/databases.js";
import { connectorDefinitions, startConnectors } from "../src/connectors.js";
import { startEmbedded, type EmbeddedSystem } from "../src/system.js";

// Embedded mode runs its rail connectors in its own process (CORRIDOR_CONNECTORS): their operator
// service (ConnectorAdminService: held files, suspense) is on the embedded internal port, routed by
// the connector's name, so the operator CLI reaches it at the usual --url, with no --connector-url.
// Over PostgreSQL, the ACH connector configured as main.ts would (its settings from the environment).

const root = resolve(import.meta.dirname, "../..");
const databaseUrl = process.env.DATABASE_URL ?? "";

const ACH_ENV = {
  ACH_ODFI_ROUTING: "121042882",
  ACH_IMMEDIATE_ORIGIN: "1234567890",
  ACH_IMMEDIATE_ORIGIN_NAME: "Corridor Test",
  ACH_COMPANY_NAME: "Corridor",
  ACH_COMPANY_ID: "1234567890",
  ACH_SFTP_HOST: "127.0.0.1",
  ACH_SFTP_PORT: "1", // nothing listens: its passes fail and are retried; the admin service does not need the bank
  ACH_SFTP_USERNAME: "corridor",
  ACH_SFTP_PASSWORD: "not-used",
  ACH_SFTP_HOST_KEY: "SHA256:AAAA",
  ACH_POLL_MS: "600000",
};

function admin(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      ["--import", "tsx", resolve(root, "scripts/admin.ts"), ...args],
      { cwd: root, env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env }, timeout: 60_000 },
      (err, stdout, stderr) => done({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

describe.skipIf(!databaseUrl)(`operator CLI: an embedded deployment's connectors on its internal port${databaseUrl ? "" : " — skipped: DATABASE_URL is needed"}`, () => {
  let db: { url: string; drop(): Promise<void> };
  let system: EmbeddedSystem;
  let connectors: Awaited<ReturnType<typeof startConnectors>>;
  let env: Record<string, string>;
  const held = "CORRIDOR-20260105-1000-A.ach";

  beforeAll(async () => {
    db = await createFreshDatabase(databaseUrl, "corridor_connadmin", { migrated: false });
    const log = createLogger("admin-cli-connectors", "silent");
    system = await startEmbedded({ log, databaseUrl: db.url, httpHost: "127.0.0.1", httpPort: 0, internalPort: 0 });
    connectors = await startConnectors(await connectorDefinitions(["ach-nacha"]), { db: system.db, bus: system.bus, clock: systemClock, log, env: ACH_ENV });
    system.connectors.attach(connectors.running);
    // A file the connector holds for the operator (as its upload pass does when an upload died at an unknown point).
    await connectors.running[0]!.db
      .insertInto("ach_files")
      .values({ file_name: held, day: "2026-01-05", modifier: "A", window_key: "2026-01-05T10:00", status: "HELD", content: "", entry_count: 0, total_debit: 0, total_credit: 0, detail: "upload interrupted", built_at: new Date("2026-01-05T15:00:00Z") })
      .execute();
    env = { CORRIDOR_INTERNAL_PORT: new URL(system.internalUrl!).port };
  }, 120_000);
  afterAll(async () => {
    system?.connectors.detach(connectors?.running.map((c) => c.name) ?? []);
    await connectors?.stop();
    await system?.stop();
    await db?.drop();
  });

  it("lists and cancels the ACH connector's held file, and lists its suspense, at the internal port without --connector-url", async () => {
    const listed = await admin(["connector", "files", "list", "--connector", "ach-nacha", "--status", "HELD", "--json"], env);
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout)).toMatchObject([{ fileName: held, status: "HELD", detail: "upload interrupted", entryCount: 0 }]);

    const cancelled = await admin(["connector", "files", "cancel", "--connector", "ach-nacha", "--file", held, "--note", "bank: never received", "--json"], env);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(JSON.parse(cancelled.stdout)).toMatchObject({ fileName: held, status: "CANCELLED", failedEntries: 0 });
    expect((await connectors.running[0]!.db.selectFrom("ach_files").select("status").where("file_name", "=", held).executeTakeFirstOrThrow()).status).toBe("CANCELLED");

    const suspense = await admin(["connector", "suspense", "list", "--connector", "ach-nacha"], env);
    expect(suspense.code, suspense.stderr).toBe(0);
    expect(suspense.stdout).toContain("Nothing in the connector's suspense");
  }, 180_000);

  it("answers NOT_FOUND naming a connector this process does not run, and the ones it does", async () => {
    const res = await admin(["connector", "files", "list", "--connector", "sepa"], env);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/CONNECTOR_NOT_FOUND[\s\S]*Connector sepa is not running in this process \(running: ach-nacha\)/);
    const rpc = createClient(ConnectorAdminService, createGrpcTransport({ baseUrl: system.internalUrl! }));
    await expect(rpc.listBankItems({ connector: "swift" })).rejects.toThrow(/Connector swift is not running in this process/);
    // The one connector here is "any" (as a connector's own process answers an empty name).
    expect((await rpc.listFiles({ connector: "", status: "ALL" })).files.map((f) => f.fileName)).toEqual([held]);
  }, 120_000);

  it("stops answering for a connector once it is detached (shutting down)", async () => {
    const rpc = createClient(ConnectorAdminService, createGrpcTransport({ baseUrl: system.internalUrl! }));
    system.connectors.detach(["ach-nacha"]);
    try {
      await expect(rpc.listFiles({ connector: "ach-nacha" })).rejects.toThrow(/Connector ach-nacha is not running in this process \(running: none\)/);
      await expect(rpc.listFiles({ connector: "" })).rejects.toThrow(/connector: must name a connector \(running in this process: none\)/);
    } finally {
      system.connectors.attach(connectors.running);
    }
  });

  it("at a target that serves no connectors (split's auth-sessions) without --connector-url: says where the connector's service is, exit 1", async () => {
    // A deployment's auth-sessions stand-in: it answers the CLI's probe and nothing else.
    const authOnly = await serveConnect({
      routes: (router) => router.service(PlatformAdminService, { getDeployment: async () => ({ deploymentId: "Deployment:connadmin-test", name: "split stand-in", database: "postgres", platformCount: 0 }) } as never),
      interceptors: [appErrorInterceptor],
      port: 0,
      host: "127.0.0.1",
    });
    try {
      const res = await admin(["--url", `http://127.0.0.1:${authOnly.port}`, "connector", "files", "list", "--connector", "ach-nacha"], {});
      expect(res.code).toBe(1);
      expect(res.stderr).toContain("the target serves no connector admin service (only embedded mode's internal port does): give the connector's own URL with --connector-url");
      // With it, the same command reaches the connector (here: the embedded port that serves ach-nacha).
      const ok = await admin(["--url", `http://127.0.0.1:${authOnly.port}`, "--connector-url", system.internalUrl!, "connector", "files", "list", "--connector", "ach-nacha", "--json"], {});
      expect(ok.code, ok.stderr).toBe(0);
      expect(JSON.parse(ok.stdout).map((f: { fileName: string }) => f.fileName)).toEqual([held]);
    } finally {
      await authOnly.close();
    }
  }, 120_000);
});
