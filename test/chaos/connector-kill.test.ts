// Issue 24: the ACH connector killed mid-window in split mode. The split launcher (scripts/
// start-split.ts) runs the ACH connector as a process of its own (`CORRIDOR_CONNECTORS=ach-nacha`,
// the entry `corridor connector ach-nacha` runs), beside every service, on Postgres and Kafka; its
// bank is Debian's OpenSSH sshd (test/infra/sftp/sshd.ts) with a bank that reads every upload with
// another NACHA implementation and refuses a trace number it saw before. Pulls are queued in a
// cut-off window, the connector is killed with SIGKILL while the window is open, and again the
// moment its file lands in the bank's inbox (between the upload and its record, when the kill is
// fast enough); the launcher restarts it each time. The bank receives each entry exactly once, in
// one file for the window, and every pull reaches COMPLETED with the money in the account.
//
// The connector runs on real time, so the bank's day is made for the test: a cut-off every
// minute in UTC, every day a banking day (ACH_BUSINESS_DAYS, ACH_CALENDAR=NONE), entries settled
// and available at once (same-day windows, ACH_SETTLEMENT_TIME 00:00, no availability days).
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { createLogger, openDatabase, type DatabaseHandle } from "@corridor/kit";
import { PlatformAdminService } from "@corridor/proto/corridor/auth_sessions/v1/platform_admin_service_pb.js";
import { Environment } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import { LedgerAdminService } from "@corridor/proto/corridor/ledger/v1/ledger_admin_service_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sftpBank, type SftpBank } from "../../connectors/ach-nacha/test/bank/sftp-bank.js";
import { sftpServerRequired, sftpServerUnavailableReason, startSftpServer, type SftpTestServer } from "../infra/sftp/sshd.js";
import { startSplitSystem } from "../infra/split-system.js";
import { usdAccountInfo } from "../e2e/ledger-helpers.js";

const infra = { DATABASE_URL: process.env.DATABASE_URL ?? "", REDIS_URL: process.env.REDIS_URL ?? "", KAFKA_BROKERS: process.env.KAFKA_BROKERS ?? "" };
const missingInfra = Object.entries(infra)
  .filter(([, v]) => !v)
  .map(([k]) => k);
const sftpUnavailable = sftpServerUnavailableReason();
const why = missingInfra.length > 0 ? `${missingInfra.join(", ")} not set` : sftpUnavailable && !sftpServerRequired ? `no SFTP server: ${sftpUnavailable}` : "";
const required = process.env.CI === "true";

const ODFI = "121042882";
const SLOT_MS = 60_000;
/** Every minute of the day, HH:MM (a window a minute long keeps the suite short). */
const everyMinute = Array.from({ length: 1440 }, (_, i) => `${String(Math.floor(i / 60)).padStart(2, "0")}:${String(i % 60).padStart(2, "0")}`).join(",");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(why && !required)(`chaos: the ACH connector killed mid-window in split mode${why ? ` — skipped: ${why}` : ""}`, () => {
  let server: SftpTestServer;
  let bank: SftpBank;
  let system: Awaited<ReturnType<typeof startSplitSystem>>;
  let db: DatabaseHandle;
  const lines: string[] = [];

  beforeAll(async () => {
    if (why) throw new Error(`this suite must run here (CI=true): ${why}`);
    server = await startSftpServer();
    bank = sftpBank({ root: server.localRoot, bankRouting: "231380104", odfiRouting: ODFI });
    // The credential comes as a secret file, as in a deployment.
    const secrets = mkdtempSync(join(tmpdir(), "corridor-ach-secret-"));
    writeFileSync(join(secrets, "key"), server.privateKey, { mode: 0o600 });
    system = await startSplitSystem(
      infra,
      {
        CORRIDOR_CONNECTORS: "ach-nacha",
        // A fresh database migrated by the services as they start, on a machine the other suites may share.
        CORRIDOR_READY_TIMEOUT_MS: "400000",
        CORRIDOR_SPLIT_RESTART_LIMIT: "5",
        CORRIDOR_SPLIT_RESTART_BACKOFF_MS: "200",
        ACH_ODFI_ROUTING: ODFI,
        ACH_IMMEDIATE_ORIGIN: "1234567890",
        ACH_IMMEDIATE_ORIGIN_NAME: "Corridor Chaos",
        ACH_COMPANY_NAME: "Corridor",
        ACH_COMPANY_ID: "1234567890",
        ACH_POLL_MS: "100",
        ACH_CUTOFF_TIMEZONE: "UTC",
        ACH_CUTOFF_TIMES: everyMinute,
        ACH_SAME_DAY_CUTOFFS: everyMinute,
        ACH_BUSINESS_DAYS: "1,2,3,4,5,6,7",
        ACH_CALENDAR: "NONE",
        ACH_SETTLEMENT_TIME: "00:00",
        ACH_DEBIT_AVAILABILITY_DAYS: "0",
        ACH_SFTP_HOST: server.host,
        ACH_SFTP_PORT: String(server.port),
        ACH_SFTP_USERNAME: server.username,
        ACH_SFTP_PRIVATE_KEY_FILE: join(secrets, "key"),
        ACH_SFTP_HOST_KEY: server.hostPublicKey,
        ACH_SFTP_INBOX_DIR: server.remotePath("inbox"),
        ACH_SFTP_OUTBOX_DIR: server.remotePath("outbox"),
        ACH_SFTP_ARCHIVE_DIR: server.remotePath("archive"),
      },
      (line) => {
        lines.push(line);
        if (lines.length > 400) lines.shift();
      },
      { fromTemplate: false, readyTimeoutMs: 420_000 },
    );
    db = await openDatabase({ databaseUrl: system.databaseUrl, poolSize: 2 });
  }, 480_000);

  afterAll(async () => {
    await db?.close();
    await system?.stop();
    await server?.stop();
  });

  it("kills the connector process mid-window and between upload and record: the bank gets each entry once, one file for the window, every pull completes", { timeout: 600_000 }, async () => {
    const ach = () => db.forSchema<any>("connector_ach_nacha");
    const fail = (what: string) => new Error(`${what}\n--- last lines of the processes ---\n${lines.slice(-60).join("\n")}`);
    const until = async <T>(what: string, check: () => Promise<T | undefined | false>, ms = 120_000): Promise<T> => {
      const deadline = Date.now() + ms;
      for (;;) {
        const v = await check().catch(() => undefined);
        if (v) return v;
        if (Date.now() > deadline) throw fail(`timed out waiting for ${what}`);
        await sleep(50);
      }
    };

    // A PRODUCTION platform whose (USD, ACH) the operator bound to the connector.
    const admin = createClient(PlatformAdminService, createGrpcTransport({ baseUrl: system.info.serviceUrls["auth-sessions"] }));
    const created = await admin.createPlatform({ name: "ach kill", environment: Environment.PRODUCTION, isRegulatedFinancialInstitution: false });
    await createClient(LedgerAdminService, createGrpcTransport({ baseUrl: system.info.serviceUrls.ledger })).bindPlatformRail({ platformId: created.platform!.id, currency: "USD", paymentRail: "ACH", connector: "ach-nacha" });
    const auth = `Basic ${Buffer.from(`${created.token!.clientId}:${created.clientSecret}`).toString("base64")}`;
    const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
      const res = await fetch(`${system.info.url}/2025-10-13${path}`, { method, headers: { authorization: auth, ...(body ? { "content-type": "application/json" } : {}), ...headers }, body: body ? JSON.stringify(body) : undefined });
      return { status: res.status, body: (await res.json().catch(() => undefined)) as any };
    };
    const internal = await until("the platform's USD account", async () => (await call("GET", "/platform/internal-accounts?currency=USD")).body?.data?.[0] as { id: string } | undefined);
    const externals: { id: string }[] = [];
    for (const suffix of ["000", "002", "004"]) {
      const res = await call("POST", "/platform/external-accounts", { currency: "USD", accountInfo: usdAccountInfo(suffix) });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      externals.push(res.body);
    }

    // Start at the beginning of a window, so every pull is queued in it with time to spare.
    const intoSlot = () => Date.now() % SLOT_MS;
    if (intoSlot() > 15_000) await sleep(SLOT_MS - intoSlot() + 1_000);
    const amounts = [5_000, 2_500, 1_234];
    const pulls: string[] = [];
    for (const [i, amount] of amounts.entries()) {
      const res = await call("POST", "/transfer-in", { source: { accountId: externals[i]!.id }, destination: { accountId: internal.id }, amount }, { "idempotency-key": `ach-kill-${i}` });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      pulls.push(res.body.id);
    }
    const queued = await until("the connector to queue the three pulls", async () => {
      const rows = await ach().selectFrom("ach_entries").select(["transaction_id", "window_key", "cutoff_at", "status"]).execute();
      return rows.length === 3 && rows.every((r: { status: string }) => r.status === "QUEUED") ? (rows as { window_key: string; cutoff_at: Date }[]) : undefined;
    });
    expect(new Set(queued.map((r) => r.window_key)).size).toBe(1);
    const cutoff = new Date(queued[0]!.cutoff_at).getTime();

    // Killed while the window is open.
    const first = system.pidOf("connector-ach-nacha");
    expect(Date.now()).toBeLessThan(cutoff);
    process.kill(first, "SIGKILL");
    const second = await system.nextStart("connector-ach-nacha", first, 60_000);

    // Killed again the moment the window's file lands in the bank's inbox: before the connector
    // records the upload when the kill is fast enough (then the restart finds the same bytes there).
    const inbox = join(server.localRoot, "inbox");
    const landed = await until("the window's file in the bank's inbox", async () => readdirSync(inbox).find((f) => f.endsWith(".ach") && !f.startsWith(".")), Math.max(0, cutoff - Date.now()) + 120_000);
    process.kill(second, "SIGKILL");
    const statusAtKill = (await ach().selectFrom("ach_files").select("status").where("file_name", "=", landed).executeTakeFirst())?.status;
    await system.nextStart("connector-ach-nacha", second, 60_000);

    // The restarted connector records the file (not sent again); only then does the bank collect it.
    await until("the file recorded as uploaded", async () => (await ach().selectFrom("ach_files").select("status").where("file_name", "=", landed).executeTakeFirst())?.status === "UPLOADED");
    await bank.step(async () => false, new Date().toISOString().slice(2, 10).replaceAll("-", ""));

    for (const id of pulls) await until(`pull ${id} COMPLETED`, async () => (await call("GET", `/transactions/${id}`)).body?.status === "COMPLETED");
    const balance = await until("the balance", async () => {
      const b = (await call("GET", "/platform/internal-accounts?currency=USD")).body?.data?.[0]?.balance?.amount as number | undefined;
      return b === 8_734 ? b : undefined;
    });
    expect(balance).toBe(amounts.reduce((a, b) => a + b, 0));

    // Exactly once at the bank: one file for the window, each entry once (the bank refuses a trace it saw before).
    expect(bank.received).toEqual([landed]);
    expect([...bank.accepted.values()].map((e) => [e.transactionCode, e.amount]).sort()).toEqual(amounts.map((a) => ["27", BigInt(a)]).sort());
    expect(readdirSync(inbox).filter((f) => !f.startsWith("."))).toEqual([]);
    expect(existsSync(join(server.localRoot, `received-${landed}`))).toBe(true);
    const files = await ach().selectFrom("ach_files").select(["file_name", "status"]).execute();
    expect(files).toEqual([{ file_name: landed, status: "UPLOADED" }]);
    const outcomes = await ach().selectFrom("connector_outcomes").select(["transaction_id", "status"]).orderBy("transaction_id").orderBy("sequence").execute();
    for (const id of pulls) expect(outcomes.filter((o: { transaction_id: string }) => o.transaction_id === id).map((o: { status: string }) => o.status)).toEqual(["PROCESSING", "COMPLETED"]);
    createLogger("ach-kill", "info").info({ file: landed, statusAtSecondKill: statusAtKill ?? "none" }, statusAtKill === "UPLOADING" ? "the second kill landed between the upload and its record" : "the second kill landed after the upload was recorded");
  });
});
