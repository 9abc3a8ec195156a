import { createClient } from "@connectrpc/connect";
import { achConnector } from "@corridor/connector-ach-nacha";
import { ManualClock } from "@corridor/kit";
import { LedgerAdminService } from "@corridor/proto/corridor/ledger/v1/ledger_admin_service_pb.js";
import type { RunningConnector } from "@corridor/connector";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sftpBank, type SftpBank } from "../../connectors/ach-nacha/test/bank/sftp-bank.js";
import { sftpServerRequired, sftpServerUnavailableReason, startSftpServer, type SftpTestServer } from "../infra/sftp/sshd.js";
import { eventually, mode, skipReason, startTestSystem, type Caller, type TestSystem } from "./harness.js";
import { balanceOf, platformAccount, txStatus, usdAccountInfo } from "./ledger-helpers.js";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * Issue 24 item 3 through the public API: a PRODUCTION platform whose (USD, ACH) the operator bound
 * to the ACH connector pulls and pays out by NACHA files uploaded to a real SFTP server (OpenSSH),
 * which a bank reading them with another NACHA implementation settles; a payout returned R01 after
 * settlement comes back. The connector runs on a clock of its own that the test moves through the
 * bank's days (cut-offs, settlement, the pull's availability days); the rest of the system on real time.
 */
const sftpUnavailable = sftpServerUnavailableReason();
const skip = skipReason() || (sftpUnavailable && !sftpServerRequired ? `no SFTP server: ${sftpUnavailable}` : "");

describe.skipIf(skip)(`ACH connector end to end (${mode})${skip ? ` — skipped: ${skip}` : ""}`, () => {
  let system: TestSystem;
  let server: SftpTestServer;
  let bank: SftpBank;
  let ach: RunningConnector;
  let prod: Caller;
  let usd: { id: string };
  const clock = new ManualClock(new Date());
  const ODFI = "121042882";

  beforeAll(async () => {
    server = await startSftpServer();
    bank = sftpBank({ root: server.localRoot, bankRouting: "231380104", odfiRouting: ODFI });
    system = await startTestSystem();
    // The connector's own clock: its windows and settlement move as the test says.
    ach = await system.startConnector({ ...achConnector, build: (ctx) => achConnector.build({ ...ctx, clock }) }, {
      ACH_ODFI_ROUTING: ODFI,
      ACH_IMMEDIATE_ORIGIN: "1234567890",
      ACH_IMMEDIATE_ORIGIN_NAME: "Corridor E2E",
      ACH_COMPANY_NAME: "Corridor",
      ACH_COMPANY_ID: "1234567890",
      ACH_POLL_MS: "25",
      ACH_SFTP_HOST: server.host,
      ACH_SFTP_PORT: String(server.port),
      ACH_SFTP_USERNAME: server.username,
      ACH_SFTP_PRIVATE_KEY: server.privateKey,
      ACH_SFTP_HOST_KEY: server.hostPublicKey,
      ACH_SFTP_INBOX_DIR: server.remotePath("inbox"),
      ACH_SFTP_OUTBOX_DIR: server.remotePath("outbox"),
      ACH_SFTP_ARCHIVE_DIR: server.remotePath("archive"),
    });
    prod = await system.createPlatform({ environment: "PRODUCTION", name: "ach e2e" });
    usd = await platformAccount(prod);
    await createClient(LedgerAdminService, system.transportFor("ledger")).bindPlatformRail({ platformId: prod.platformId, currency: "USD", paymentRail: "ACH", connector: achConnector.name });
  }, 180_000);
  afterAll(async () => {
    await system?.stop();
    await server?.stop();
  });

  const external = async (suffix: string) => {
    const res = await prod.call("POST", "/platform/external-accounts", { currency: "USD", accountInfo: usdAccountInfo(suffix) });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body as { id: string };
  };

  /** Lets the bank answer and moves the connector's clock on whenever it has caught up, until the transaction's status is reached. */
  const settleUntil = async (id: string, status: string) => {
    const deadline = Date.now() + 100_000;
    for (;;) {
      const tx = (await prod.call("GET", `/transactions/${id}`)).body;
      if (tx?.status === status) return tx;
      if (Date.now() > deadline) throw new Error(`transaction ${id} is ${tx?.status}, not ${status}`);
      const completed = async (trace: string) => !!(await ach.db.selectFrom("ach_entries").select("status").where("trace_number", "=", trace).where("status", "=", "COMPLETED").executeTakeFirst());
      const { wrote } = await bank.step(completed, clock.now().toISOString().slice(2, 10).replaceAll("-", ""));
      const now = clock.now();
      const busy = await ach.db
        .selectFrom("ach_entries")
        .select("transaction_id")
        .where((eb) => eb.or([eb.and([eb("status", "=", "QUEUED"), eb("cutoff_at", "<=", now)]), eb("status", "=", "FILED"), eb.and([eb("status", "=", "SUBMITTED"), eb("completes_at", "<=", now)])]))
        .executeTakeFirst();
      if (!wrote && !bank.outboxBusy() && !busy) clock.advance(30 * 60_000);
      await new Promise((r) => setTimeout(r, 25));
    }
  };

  it("pulls by an ACH debit, pays out by an ACH credit, and a payout returned R01 after settlement comes back; every entry reached the bank once", { timeout: 240_000 }, async () => {
    const ada = await external("000");
    const pull = await prod.call("POST", "/transfer-in", { source: { accountId: ada.id }, destination: { accountId: usd.id }, amount: 5_000 });
    expect(pull.status, JSON.stringify(pull.body)).toBe(201);
    await settleUntil(pull.body.id, "COMPLETED");
    expect(await balanceOf(prod)).toBe(5_000);

    const paid = await prod.call("POST", "/transfer-out", { source: { accountId: usd.id }, destination: { accountId: ada.id }, amount: 1_200 }, { "idempotency-key": "ach-e2e-out" });
    expect(paid.status, JSON.stringify(paid.body)).toBe(201);
    await settleUntil(paid.body.id, "COMPLETED");
    expect(await balanceOf(prod)).toBe(3_800);

    const returning = await external("001"); // the test bank returns "…0001" R01 after settlement
    const bounced = await prod.call("POST", "/transfer-out", { source: { accountId: usd.id }, destination: { accountId: returning.id }, amount: 700 }, { "idempotency-key": "ach-e2e-return" });
    expect(bounced.status, JSON.stringify(bounced.body)).toBe(201);
    await settleUntil(bounced.body.id, "COMPLETED");
    expect(await balanceOf(prod)).toBe(3_100);
    const failed = await settleUntil(bounced.body.id, "FAILED");
    expect(failed).toMatchObject({ status: "FAILED" });
    expect(await balanceOf(prod)).toBe(3_800);

    const accepted = [...bank.accepted.values()];
    expect(accepted.map((e) => [e.transactionCode, e.amount, e.accountNumber])).toEqual([
      ["27", 5_000n, "881234500000"],
      ["22", 1_200n, "881234500000"],
      ["22", 700n, "881234500001"],
    ]);
    expect(new Set(accepted.map((e) => e.file)).size).toBe(3);
  });

  it("a file the connector HELD (its name taken in the bank's inbox) cancelled by the operator: the payout FAILED FILE_CANCELLED once, the money back, OUTGOING_PAYMENT_FAILED; nothing reached the bank", { timeout: 120_000 }, async () => {
    const bob = await external("002");
    const before = await balanceOf(prod);
    const out = await prod.call("POST", "/transfer-out", { source: { accountId: usd.id }, destination: { accountId: bob.id }, amount: 400 }, { "idempotency-key": "ach-e2e-held" });
    expect(out.status, JSON.stringify(out.body)).toBe(201);
    expect(await balanceOf(prod)).toBe(before - 400);
    // The file its window will be: the name is deterministic (day, cut-off, the day's count of files).
    const entry = await eventually(async () => (await ach.db.selectFrom("ach_entries").select(["window_key", "cutoff_at"]).where("transaction_id", "=", out.body.id).executeTakeFirst()) as { window_key: string; cutoff_at: Date } | undefined, 30_000);
    const day = entry.window_key.slice(0, 10);
    const used = Number((await ach.db.selectFrom("ach_files").select((eb) => eb.fn.countAll<string>().as("n")).where("day", "=", day).executeTakeFirstOrThrow()).n);
    const name = `CORRIDOR-${day.replaceAll("-", "")}-${entry.window_key.slice(11).replace(":", "")}-${"ABCDEFGHIJKLMNOPQRSTUVWXYZ"[used]}.ach`;
    const squatter = join(server.localRoot, "inbox", name);
    writeFileSync(squatter, "another file under our name\n");
    clock.set(new Date(new Date(entry.cutoff_at).getTime() + 1_000));
    await eventually(async () => ((await ach.db.selectFrom("ach_files").select("status").where("file_name", "=", name).executeTakeFirst())?.status === "HELD" ? true : undefined), 30_000);
    expect((await prod.call("GET", `/transactions/${out.body.id}`)).body.status).toBe("PENDING");

    const { file, failedEntries } = await ach.admin!.cancelFile!(name, "e2e: the bank never received it");
    expect([file.status, failedEntries]).toEqual(["CANCELLED", 1]);
    expect(await txStatus(prod, out.body.id, "FAILED")).toMatchObject({ status: "FAILED" });
    expect(await balanceOf(prod)).toBe(before);
    const failedEvents = async () => ((await prod.call("GET", "/events?type=OUTGOING_PAYMENT_FAILED&limit=100")).body.data as { payload: { data: { id: string } } }[]).filter((e) => e.payload.data.id === out.body.id);
    await eventually(async () => ((await failedEvents()).length > 0 ? true : undefined), 30_000);
    await expect(ach.admin!.cancelFile!(name, "again")).rejects.toMatchObject({ code: "CONNECTOR_FILE_NOT_HELD" });
    expect(await failedEvents()).toHaveLength(1);
    expect(await balanceOf(prod)).toBe(before);
    expect(readFileSync(squatter, "utf8")).toBe("another file under our name\n");
    expect([...bank.accepted.values()].some((e) => e.accountNumber === "881234500002")).toBe(false);
    rmSync(squatter);
  });
});
