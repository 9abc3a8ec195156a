import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { ConnectorAdminService } from "@corridor/proto/corridor/connector/v1/connector_admin_service_pb.js";
import { describe, expect, it, vi } from "vitest";
import { createFreshDatabase } from "../../test/infra/databases.js";

// `corridor connector <name>` (the image's and the built app's `connector` deployable, whose entry
// is embedded/src/connector-main.ts): the Helm chart's connector Deployments run exactly
// `args: ["connector", "<name>"]`. A bad or missing setting stops it before anything is opened,
// with a message listing every bad key; with its settings it runs on Postgres and Kafka.
// Each start compiles the TypeScript through tsx: seconds on a busy machine.
vi.setConfig({ testTimeout: 180_000 });
const root = resolve(import.meta.dirname, "../..");
const entry = join(root, "embedded/src/connector-main.ts");

function runEntry(args: string[], env: NodeJS.ProcessEnv, opts: { until?: RegExp; timeoutMs?: number; script?: string } = {}) {
  return new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string; stdout: string; matched: boolean }>((done, fail) => {
    const child = spawn(process.execPath, ["--import", "tsx", opts.script ?? entry, ...args], { cwd: root, env: { PATH: process.env.PATH, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    let matched = false;
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      fail(new Error(`the connector process did not finish in time:\n${stdout}\n${stderr}`));
    }, opts.timeoutMs ?? 60_000);
    const onLine = (line: string) => {
      if (opts.until && !matched && opts.until.test(line)) {
        matched = true;
        child.kill("SIGTERM"); // drained and exits 0
      }
    };
    createInterface({ input: child.stdout }).on("line", (l) => ((stdout += `${l}\n`), onLine(l)));
    createInterface({ input: child.stderr }).on("line", (l) => ((stderr += `${l}\n`), onLine(l)));
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      done({ code, signal, stderr, stdout, matched });
    });
  });
}

describe("corridor connector <name>", () => {
  it("without a name: usage, exit 64; an unknown name: the known ones, exit 64", async () => {
    const none = await runEntry([], {});
    expect(none.code).toBe(64);
    expect(none.stderr).toContain("usage: corridor connector <name>");
    const unknown = await runEntry(["swift"], {});
    expect(unknown.code).toBe(64);
    expect(unknown.stderr).toMatch(/unknown connector "swift" \(known: ach-nacha, sepa, sepa-iso20022\)/);
  });

  it("with missing and bad settings: exit 78 and every bad key listed, no secret echoed, nothing opened", async () => {
    const res = await runEntry(["ach-nacha"], { ACH_ODFI_ROUTING: "123456789", ACH_SFTP_PASSWORD: "hunter2-secret", DATABASE_URL: "postgres://nobody@127.0.0.1:1/none" });
    expect(res.code).toBe(78);
    expect(res.stderr).toContain("corridor connector ach-nacha: cannot start");
    for (const key of ["ACH_ODFI_ROUTING", "ACH_IMMEDIATE_ORIGIN", "ACH_COMPANY_NAME", "ACH_COMPANY_ID", "ACH_SFTP_HOST", "ACH_SFTP_USERNAME", "ACH_SFTP_HOST_KEY"]) expect(res.stderr).toContain(`  ${key}:`);
    expect(res.stderr + res.stdout).not.toContain("hunter2-secret");
    expect(res.stderr).not.toMatch(/ECONNREFUSED|at .*\.ts:\d+/); // refused before connecting, and no stack trace
    const noKafka = await runEntry(["sepa-iso20022"], { SEPA_DEBTOR_NAME: "Corridor Operator GmbH", SEPA_DEBTOR_IBAN: "DE89370400440532013000", SEPA_FILE_DROP_DIR: mkdtempSync(join(tmpdir(), "corridor-sepa-drop-")) });
    expect(noKafka.code).toBe(78);
    expect(noKafka.stderr).toContain("connector sepa needs KAFKA_BROKERS");
  });

  it("npm start (embedded) and npm run start:split refuse bad CORRIDOR_CONNECTORS settings the same way, before starting anything", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "corridor-embedded-"));
    const embedded = await runEntry([], { CORRIDOR_CONNECTORS: "ach-nacha,sepa-iso20022", CORRIDOR_DATA_DIR: dataDir, CORRIDOR_HTTP_PORT: "0", CORRIDOR_INTERNAL_PORT: "0", SEPA_DEBTOR_NAME: "x" }, { script: join(root, "embedded/src/main.ts") });
    expect(embedded.code, embedded.stderr).toBe(78);
    expect(embedded.stderr).toContain("corridor: cannot start");
    for (const key of ["ACH_ODFI_ROUTING", "ACH_SFTP_HOST_KEY", "SEPA_DEBTOR_IBAN"]) expect(embedded.stderr).toContain(`  ${key}:`);
    expect(embedded.stdout).not.toContain("Corridor is running");
    const split = await runEntry([], { CORRIDOR_CONNECTORS: "ach-nacha,swift", DATABASE_URL: "postgres://nobody@127.0.0.1:1/none", REDIS_URL: "redis://127.0.0.1:1", KAFKA_BROKERS: "127.0.0.1:1" }, { script: join(root, "scripts/start-split.ts") });
    expect(split.code, split.stderr).toBe(78);
    expect(split.stderr).toContain('[split] cannot start\nCORRIDOR_CONNECTORS: unknown connector "swift"');
    expect(split.stdout).not.toContain("CORRIDOR_PROCESS");
  });

  it("npm start (embedded) runs the named connectors in its own process, on its database and bus, and stops them on SIGTERM", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "corridor-embedded-"));
    const drop = mkdtempSync(join(tmpdir(), "corridor-sepa-drop-"));
    const res = await runEntry(
      [],
      {
        CORRIDOR_CONNECTORS: "sepa-iso20022",
        CORRIDOR_DATA_DIR: dataDir,
        CORRIDOR_HTTP_PORT: "0",
        CORRIDOR_INTERNAL_PORT: "0",
        LOG_LEVEL: "info",
        SEPA_DEBTOR_NAME: "Corridor Operator GmbH",
        SEPA_DEBTOR_IBAN: "DE89370400440532013000",
        SEPA_FILE_DROP_DIR: drop,
        SEPA_POLL_MS: "50",
      },
      { script: join(root, "embedded/src/main.ts"), until: /Rail connectors: sepa/, timeoutMs: 170_000 },
    );
    expect(res.matched, res.stderr + res.stdout).toBe(true);
    expect({ code: res.code, signal: res.signal }, (res.stderr + res.stdout).slice(-3000)).toEqual({ code: 0, signal: null });
    // The connector's workers ran in the embedded process: they opened the bank's drop (inbox/, outbox/, archive/).
    for (const folder of ["inbox", "outbox", "archive"]) expect(existsSync(join(drop, folder)), folder).toBe(true);
  });

  const brokers = process.env.KAFKA_BROKERS ?? "";
  const databaseUrl = process.env.DATABASE_URL ?? "";
  it.skipIf(!brokers || !databaseUrl)(`runs on real Postgres and Kafka, serves health, and drains on SIGTERM${!brokers || !databaseUrl ? " — skipped: DATABASE_URL and KAFKA_BROKERS are needed" : ""}`, async () => {
    const db = await createFreshDatabase(databaseUrl, "corridor_connector", { migrated: false });
    try {
      const res = await runEntry(
        ["sepa-iso20022"],
        {
          DATABASE_URL: db.url,
          KAFKA_BROKERS: brokers,
          KAFKA_TOPIC_PREFIX: `t${randomBytes(4).toString("hex")}.`,
          PORT: "0",
          HOST: "127.0.0.1",
          LOG_LEVEL: "info",
          SEPA_DEBTOR_NAME: "Corridor Operator GmbH",
          SEPA_DEBTOR_IBAN: "DE89370400440532013000",
          SEPA_FILE_DROP_DIR: mkdtempSync(join(tmpdir(), "corridor-sepa-drop-")),
        },
        { until: /connector sepa running/, timeoutMs: 90_000 },
      );
      expect(res.matched, res.stderr + res.stdout).toBe(true);
      expect(res.code, res.stderr).toBe(0);
    } finally {
      await db.drop();
    }
  });

  it.skipIf(!brokers || !databaseUrl)(`serves the operator's ConnectorAdminService on its port (ach-nacha: its files and suspense)${!brokers || !databaseUrl ? " — skipped: DATABASE_URL and KAFKA_BROKERS are needed" : ""}`, async () => {
    const db = await createFreshDatabase(databaseUrl, "corridor_connector", { migrated: false });
    const child = spawn(process.execPath, ["--import", "tsx", entry, "ach-nacha"], {
      cwd: root,
      env: {
        PATH: process.env.PATH,
        DATABASE_URL: db.url,
        KAFKA_BROKERS: brokers,
        KAFKA_TOPIC_PREFIX: `t${randomBytes(4).toString("hex")}.`,
        PORT: "0",
        HOST: "127.0.0.1",
        LOG_LEVEL: "info",
        ACH_ODFI_ROUTING: "121042882",
        ACH_IMMEDIATE_ORIGIN: "1234567890",
        ACH_IMMEDIATE_ORIGIN_NAME: "Corridor Test",
        ACH_COMPANY_NAME: "Corridor",
        ACH_COMPANY_ID: "1234567890",
        ACH_SFTP_HOST: "127.0.0.1",
        ACH_SFTP_PORT: "1", // nothing listens: the passes fail and are retried; the admin service does not need the bank
        ACH_SFTP_USERNAME: "corridor",
        ACH_SFTP_PASSWORD: "not-used",
        ACH_SFTP_HOST_KEY: "SHA256:AAAA",
        ACH_POLL_MS: "600000",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
    try {
      const port = await new Promise<number>((done, fail) => {
        const timer = setTimeout(() => fail(new Error(`the connector did not start in time:\n${output}`)), 90_000);
        const onLine = (l: string) => {
          output += `${l}\n`;
          if (!/connector ach-nacha running/.test(l)) return;
          clearTimeout(timer);
          done((JSON.parse(l) as { port: number }).port);
        };
        createInterface({ input: child.stdout! }).on("line", onLine);
        createInterface({ input: child.stderr! }).on("line", onLine);
        void exited.then((code) => fail(new Error(`the connector exited (${code}) before it ran:\n${output}`)));
      });
      const admin = createClient(ConnectorAdminService, createGrpcTransport({ baseUrl: `http://127.0.0.1:${port}` }));
      expect((await admin.listFiles({ connector: "ach-nacha", status: "HELD" })).files).toEqual([]);
      expect((await admin.listBankItems({ connector: "ach-nacha" })).items).toEqual([]);
      await expect(admin.cancelFile({ connector: "ach-nacha", fileName: "CORRIDOR-20260105-1000-A.ach", note: "test" })).rejects.toThrow(/CORRIDOR-20260105-1000-A.ach/);
      await expect(admin.listFiles({ connector: "sepa" })).rejects.toThrow(/This is connector ach-nacha, not sepa/);
    } finally {
      child.kill("SIGTERM");
      expect(await exited, output).toBe(0);
      await db.drop();
    }
  });
});
