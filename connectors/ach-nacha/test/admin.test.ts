import { execFile } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { createNoticePublisher, createOutcomePublisher, createStatementPublisher, ConnectorAdminService, createConnectorAdminHandler, type RailInstruction } from "@corridor/connector";
import { SftpTransport } from "@corridor/connector/bank-files";
import { ManualClock, appErrorInterceptor, createLogger, newId, serveConnect, type ConnectServer, type DatabaseHandle } from "@corridor/kit";
import { openServiceTestDatabase } from "@corridor/kit/testing";
import { PlatformAdminService } from "@corridor/proto/corridor/auth_sessions/v1/platform_admin_service_pb.js";
import type { Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sftpServerRequired, sftpServerUnavailableReason, startSftpServer, type SftpTestServer } from "../../../test/infra/sftp/sshd.js";
import { achAdmin } from "../src/admin.js";
import { achConfigSchema } from "../src/config.js";
import { ACH_CONNECTOR, MIGRATIONS_DIR, SCHEMA } from "../src/connector.js";
import { acceptInstruction, buildDueFiles, readBankFiles, uploadFiles, type EngineDeps } from "../src/engine.js";
import { bankReadsUpload, bankWritesAcknowledgement, bankWritesReturnFile } from "./bank/simulator.js";

// The operator's decisions on HELD files and the connector's suspense list, as an operator makes
// them: `npm run admin -- connector files|suspense ...` (scripts/admin.ts) against the connector's
// ConnectorAdminService served over the network (the deployment probe answered by a stand-in of
// auth-sessions' GetDeployment), over PostgreSQL and the SFTP test server as the bank.

const root = resolve(import.meta.dirname, "../../..");

function admin(args: string[], url: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      ["--import", "tsx", resolve(root, "scripts/admin.ts"), "--url", url, "--connector-url", url, ...args],
      { cwd: root, env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" }, timeout: 60_000 },
      (err, stdout, stderr) => done({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

const unavailable = sftpServerUnavailableReason();

describe.skipIf(unavailable !== null && !sftpServerRequired)(`ACH connector: the operator's held files and suspense${unavailable ? ` — ${sftpServerRequired ? "cannot run" : "skipped"}: ${unavailable}` : ""}`, () => {
  let server: SftpTestServer;
  let handle: DatabaseHandle;
  let db: Kysely<any>;
  let drop: () => Promise<void>;
  let rpc: ConnectServer;
  let url: string;
  const clock = new ManualClock("2026-01-05T14:00:00.000Z"); // Monday 09:00 in New York
  let deps: EngineDeps;

  beforeAll(async () => {
    server = await startSftpServer();
    ({ db: handle, drop } = await openServiceTestDatabase({ schema: SCHEMA, migrationsDir: MIGRATIONS_DIR }));
    db = handle.forSchema<any>(SCHEMA);
    const config = achConfigSchema.parse({
      ACH_ODFI_ROUTING: "121042882", ACH_IMMEDIATE_ORIGIN: "1234567890", ACH_IMMEDIATE_ORIGIN_NAME: "Corridor Test", ACH_COMPANY_NAME: "Corridor", ACH_COMPANY_ID: "1234567890",
      ACH_SFTP_HOST: "127.0.0.1", ACH_SFTP_PORT: String(server.port), ACH_SFTP_USERNAME: server.username, ACH_SFTP_PRIVATE_KEY: server.privateKey, ACH_SFTP_HOST_KEY: server.hostPublicKey,
      ACH_SFTP_BANK_COLLECTS_UPLOADS: "true",
    });
    const transport = new SftpTransport({
      host: server.host, port: server.port, username: server.username, privateKey: server.privateKey, hostKey: server.hostPublicKey,
      inboxDir: server.remotePath("inbox"), outboxDir: server.remotePath("outbox"), archiveDir: server.remotePath("archive"), timeoutMs: 10_000,
    });
    deps = { db, clock, log: createLogger("ach-admin-test", "silent"), config, outcomes: createOutcomePublisher({ connector: ACH_CONNECTOR, clock }), notices: createNoticePublisher({ connector: ACH_CONNECTOR, clock }), statements: createStatementPublisher({ connector: ACH_CONNECTOR, clock }), transport };
    rpc = await serveConnect({
      routes: (router) => {
        router.service(ConnectorAdminService, createConnectorAdminHandler(ACH_CONNECTOR, achAdmin(deps)));
        router.service(PlatformAdminService, { getDeployment: async () => ({ deploymentId: "Deployment:connector-cli-test", name: "connector cli test", database: "postgres", platformCount: 0 }) } as never);
      },
      interceptors: [appErrorInterceptor],
      port: 0,
      host: "127.0.0.1",
    });
    url = `http://127.0.0.1:${rpc.port}`;
  }, 120_000);
  afterAll(async () => {
    await rpc?.close();
    await drop?.();
    await server?.stop();
  });

  const instruct = async (over: Partial<RailInstruction> & { accountNumber?: string } = {}) => {
    const i: RailInstruction = {
      instructionId: newId("Event"), occurredAt: clock.now(), platformId: "Platform:p1", environment: "PRODUCTION", connector: ACH_CONNECTOR,
      transactionId: newId("Transaction"), direction: "PAYOUT", kind: "TRANSFER", amount: 10_000n, currency: "USD", paymentRail: "ACH",
      externalAccountId: newId("ExternalAccount"), reference: "TXN-1", umaAddress: "",
      accountInfo: { accountNumber: over.accountNumber ?? "55550000", routingNumber: "231380104", bankAccountType: "CHECKING", beneficiary: { beneficiaryType: "INDIVIDUAL", fullName: "Jane Doe" } },
      ...over,
    };
    await db.transaction().execute((trx) => acceptInstruction(deps, i, trx));
    return i;
  };
  const statuses = async (id: string) => ((await db.selectFrom("connector_outcomes").select(["status", "reason"]).where("transaction_id", "=", id).orderBy("sequence").execute()) as Array<{ status: string; reason: string }>).map((o) => `${o.status}${o.reason ? ` ${o.reason}` : ""}`);
  const inbox = () => readdirSync(join(server.localRoot, "inbox")).filter((n) => !n.startsWith("."));
  /** A file built in the window closing at `cutoff` whose upload died at an unknown point: HELD by the next pass (the bank collects uploads). */
  const heldFile = async (cutoff: string): Promise<string> => {
    clock.set(cutoff);
    const [name] = await buildDueFiles(deps);
    await db.updateTable("ach_files").set({ status: "UPLOADING" }).where("file_name", "=", name!).execute();
    expect(await uploadFiles(deps)).toEqual([]);
    expect((await db.selectFrom("ach_files").select("status").where("file_name", "=", name!).executeTakeFirstOrThrow()).status).toBe("HELD");
    return name!;
  };

  it("cancel: a HELD file is never sent, each of its entries FAILED FILE_CANCELLED to the ledger exactly once; release: a HELD file is uploaded as built on the next pass", { timeout: 240_000 }, async () => {
    const a = await instruct({ amount: 1_500n, accountNumber: "10000001" });
    const b = await instruct({ direction: "PULL", amount: 2_700n, accountNumber: "10000002" });
    const cancelled = await heldFile("2026-01-05T15:00:01.000Z");

    const listed = await admin(["connector", "files", "list", "--connector", "ach-nacha", "--status", "HELD", "--json"], url);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stderr).toContain("Deployment:connector-cli-test");
    expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ fileName: cancelled, status: "HELD", entryCount: 2, totalDebit: "2700", totalCredit: "1500", detail: expect.stringMatching(/ask the bank/) })]);

    // Refused before anything changes: no note, the wrong connector, an unknown file.
    const noNote = await admin(["connector", "files", "cancel", "--connector", "ach-nacha", "--file", cancelled], url);
    expect(noNote.code).toBe(2);
    expect(noNote.stderr).toMatch(/needs --note/);
    const wrong = await admin(["connector", "files", "cancel", "--connector", "sepa", "--file", cancelled, "--note", "bank has nothing"], url);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/CONNECTOR_MISMATCH/);
    const unknown = await admin(["connector", "files", "release", "--connector", "ach-nacha", "--file", "CORRIDOR-20990101-1000-A.ach"], url);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/CONNECTOR_FILE_NOT_FOUND/);
    expect(await statuses(a.transactionId)).toEqual([]);

    const cancel = await admin(["connector", "files", "cancel", "--connector", "ach-nacha", "--file", cancelled, "--note", "bank ticket 77: never received", "--json"], url);
    expect(cancel.code, cancel.stderr).toBe(0);
    expect(JSON.parse(cancel.stdout)).toMatchObject({ fileName: cancelled, status: "CANCELLED", failedEntries: 2, detail: expect.stringMatching(/cancelled by the operator .*bank ticket 77/) });
    expect(await statuses(a.transactionId)).toEqual(["FAILED FILE_CANCELLED"]);
    expect(await statuses(b.transactionId)).toEqual(["FAILED FILE_CANCELLED"]);
    // The outcomes leave through the connector's outbox (published to the ledger with the transaction).
    expect(Number((await db.selectFrom("outbox").select((eb) => eb.fn.countAll<string>().as("n")).executeTakeFirstOrThrow()).n)).toBe(2);

    // Once: a second cancel or a release of the cancelled file changes nothing; no pass ever sends it.
    const again = await admin(["connector", "files", "cancel", "--connector", "ach-nacha", "--file", cancelled, "--note", "again"], url);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/CONNECTOR_FILE_NOT_HELD/);
    const late = await admin(["connector", "files", "release", "--connector", "ach-nacha", "--file", cancelled], url);
    expect(late.code).toBe(1);
    expect(late.stderr).toMatch(/CONNECTOR_FILE_NOT_HELD/);
    expect(await uploadFiles(deps)).toEqual([]);
    expect(inbox()).not.toContain(cancelled);
    expect(await statuses(a.transactionId)).toEqual(["FAILED FILE_CANCELLED"]);
    expect((await db.selectFrom("ach_entries").select("status").where("file_name", "=", cancelled).execute()).map((e: { status: string }) => e.status)).toEqual(["FAILED", "FAILED"]);
    // The bank acknowledges the file after all: nothing moves back by itself (logged at error for the operator).
    const cancelledContent = (await db.selectFrom("ach_files").select("content").where("file_name", "=", cancelled).executeTakeFirstOrThrow()).content as string;
    writeFileSync(join(server.localRoot, "outbox", "ACK-CANCELLED.ach"), bankWritesAcknowledgement(cancelledContent));
    expect(await readBankFiles(deps)).toEqual(["ACK-CANCELLED.ach"]);
    expect((await db.selectFrom("ach_files").select("status").where("file_name", "=", cancelled).executeTakeFirstOrThrow()).status).toBe("CANCELLED");
    expect(JSON.parse((await db.selectFrom("ach_bank_files").select("detail").where("file_name", "=", "ACK-CANCELLED.ach").executeTakeFirstOrThrow()).detail)).toMatchObject({ acknowledgement: "CANCELLED_FILE_ACKNOWLEDGED" });
    expect(await statuses(b.transactionId)).toEqual(["FAILED FILE_CANCELLED"]);

    // Release: the bank says the next held file never arrived; the next pass sends it, once.
    clock.set("2026-01-05T16:00:00.000Z");
    const c = await instruct({ amount: 4_200n, accountNumber: "10000003" });
    const released = await heldFile("2026-01-05T18:00:01.000Z");
    const content = (await db.selectFrom("ach_files").select("content").where("file_name", "=", released).executeTakeFirstOrThrow()).content as string;
    const release = await admin(["connector", "files", "release", "--connector", "ach-nacha", "--file", released, "--note", "bank: not received"], url);
    expect(release.code, release.stderr).toBe(0);
    expect(release.stdout).toContain(`Released ${released}: BUILT`);
    expect(await statuses(c.transactionId)).toEqual([]);
    expect(await uploadFiles(deps)).toEqual([released]);
    expect(await uploadFiles(deps)).toEqual([]);
    expect(inbox()).toEqual([released]);
    expect(readFileSync(join(server.localRoot, "inbox", released), "latin1")).toBe(content);
    expect(bankReadsUpload(content).map((e) => [e.accountNumber, e.amount])).toEqual([["10000003", 4_200n]]);
    expect(await statuses(c.transactionId)).toEqual(["PROCESSING"]);
    const after = await admin(["connector", "files", "list", "--connector", "ach-nacha"], url);
    expect(after.code, after.stderr).toBe(0);
    expect(after.stdout).toMatch(new RegExp(`${released}\\s+UPLOADED`));
    expect(after.stdout).toMatch(new RegExp(`${cancelled}\\s+CANCELLED`));
  });

  it("suspense list: returns the connector refused to match (unknown trace, another amount) are listed with their reason; a matched one only with --status ALL", { timeout: 240_000 }, async () => {
    clock.set("2026-01-06T14:00:00.000Z");
    const p = await instruct({ amount: 3_300n, accountNumber: "20000001" });
    clock.set("2026-01-06T15:00:01.000Z");
    const [name] = await buildDueFiles(deps);
    expect(await uploadFiles(deps)).toEqual([name]);
    const [sent] = bankReadsUpload(readFileSync(join(server.localRoot, "inbox", name!), "latin1"));
    writeFileSync(
      join(server.localRoot, "outbox", "RET-SUSP.ach"),
      bankWritesReturnFile({ bankRouting: "231380104", odfiRouting: "121042882", date: "260107", items: [
        { entry: sent!, code: "R03" },
        { entry: { ...sent!, traceNumber: "121042889999999" }, code: "R01" },
        { entry: { ...sent!, amount: 3_301n }, code: "R02" },
      ] }),
    );
    expect(await readBankFiles(deps)).toEqual(["RET-SUSP.ach"]);
    expect(await statuses(p.transactionId)).toEqual(["PROCESSING", "FAILED R03"]);

    const list = await admin(["connector", "suspense", "list", "--connector", "ach-nacha", "--json"], url);
    expect(list.code, list.stderr).toBe(0);
    const items = JSON.parse(list.stdout) as Array<{ code: string; suspenseReason?: string; originalTraceNumber: string; amount: string; bankFile: string; transactionId?: string }>;
    expect(items.map((i) => [i.code, i.suspenseReason, i.originalTraceNumber, i.amount, i.bankFile, i.transactionId]).sort()).toEqual([
      ["R01", "UNKNOWN_TRACE", "121042889999999", "3300", "RET-SUSP.ach", undefined],
      ["R02", "AMOUNT_MISMATCH", sent!.traceNumber, "3301", "RET-SUSP.ach", undefined],
    ]);
    const text = await admin(["connector", "suspense", "list", "--connector", "ach-nacha"], url);
    expect(text.stdout).toMatch(/RETURN\s+R01\s+UNKNOWN_TRACE/);
    const all = await admin(["connector", "suspense", "list", "--connector", "ach-nacha", "--status", "ALL", "--kind", "RETURN", "--json"], url);
    expect((JSON.parse(all.stdout) as Array<{ code: string; transactionId?: string }>).map((i) => [i.code, i.transactionId]).sort()).toEqual([["R01", undefined], ["R02", undefined], ["R03", p.transactionId]]);
  });
});
