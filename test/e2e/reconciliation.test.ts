import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createClient } from "@connectrpc/connect";
import { achConnector } from "@corridor/connector-ach-nacha";
import { ManualClock } from "@corridor/kit";
import { LedgerAdminService } from "@corridor/proto/corridor/ledger/v1/ledger_admin_service_pb.js";
import type { RunningConnector } from "@corridor/connector";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeBankBai2 } from "../../connectors/ach-nacha/test/bank/bai2-writer.js";
import { sftpBank, type SftpBank } from "../../connectors/ach-nacha/test/bank/sftp-bank.js";
import { sftpServerRequired, sftpServerUnavailableReason, startSftpServer, type SftpTestServer } from "../infra/sftp/sshd.js";
import { mode, skipReason, startTestSystem, type Caller, type TestSystem } from "./harness.js";
import { platformAccount, usdAccountInfo } from "./ledger-helpers.js";

/**
 * Issue 24 item 5 (second half) through the public API: a PRODUCTION platform bound to the ACH
 * connector pulls and pays out; the bank's end-of-day BAI2 statement, dropped in its SFTP outbox,
 * reaches the ledger through the connector (corridor.rail-statements.v1) and reconciles CLEAN; the
 * next day's statement books a payout for another amount, and the operator's admin RPC lists that
 * day with its AMOUNT_MISMATCH break until it is resolved.
 */
const sftpUnavailable = sftpServerUnavailableReason();
const skip = skipReason() || (sftpUnavailable && !sftpServerRequired ? `no SFTP server: ${sftpUnavailable}` : "");

describe.skipIf(skip)(`end-of-day reconciliation of the ACH bank's statements (${mode})${skip ? ` — skipped: ${skip}` : ""}`, () => {
  let system: TestSystem;
  let server: SftpTestServer;
  let bank: SftpBank;
  let ach: RunningConnector;
  let prod: Caller;
  let usd: { id: string };
  let admin: ReturnType<typeof createClient<typeof LedgerAdminService>>;
  const clock = new ManualClock(new Date());
  const ODFI = "121042882";
  const ACCOUNT = "4455667788";

  beforeAll(async () => {
    server = await startSftpServer();
    bank = sftpBank({ root: server.localRoot, bankRouting: "231380104", odfiRouting: ODFI });
    system = await startTestSystem();
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
    prod = await system.createPlatform({ environment: "PRODUCTION", name: "reconciliation e2e" });
    usd = await platformAccount(prod);
    admin = createClient(LedgerAdminService, system.transportFor("ledger"));
    await admin.bindPlatformRail({ platformId: prod.platformId, currency: "USD", paymentRail: "ACH", connector: achConnector.name });
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

  /** As in ach-nacha.test.ts: the bank answers, the connector's clock moves on when it has caught up, until the status is reached. */
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

  /** The bank's day in New York (the connector's zone) of a transaction's settlement. */
  const bankDay = (settledAt: string) => new Intl.DateTimeFormat("en-CA", { timeZone: "America/New_York" }).format(new Date(settledAt));
  const traceOf = (amount: bigint) => [...bank.accepted.values()].find((e) => e.amount === amount)!.traceNumber;
  let balance = 10_000_000n;
  let files = 0;
  /** The bank's BAI2 statement of the day, in its outbox: 16 records carry the trace numbers as customer references. */
  const statement = (asOf: string, details: { credit: boolean; cents: bigint; trace: string }[]) => {
    const opening = balance;
    for (const d of details) balance += d.credit ? d.cents : -d.cents;
    const name = `BAI2-${asOf}-${++files}.txt`;
    const content = writeBankBai2({
        sender: "231380104",
        receiver: "CORRIDOR",
        fileId: `F${files}`,
        asOf,
        createdAt: new Date(),
        accounts: [{ accountNumber: ACCOUNT, openingLedger: opening, closingLedger: balance, details: details.map((d, i) => ({ typeCode: d.credit ? "165" : "455", cents: d.cents, bankReference: `BK${files}-${i + 1}`, customerReference: d.trace, text: d.credit ? "ACH DEBIT COLLECTED" : "ACH CREDIT ORIGINATED" })) }],
      });
    writeFileSync(join(server.localRoot, "outbox", name), content);
    return content;
  };
  const reportsUntil = async (count: number) => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const { reports } = await admin.listReconciliationReports({ connector: achConnector.name });
      if (reports.length >= count) return reports;
      if (Date.now() > deadline) throw new Error(`${reports.length} reconciliation reports, expected ${count}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  it("a day the bank's statement agrees with is CLEAN; the next day's amount mismatch is listed with its break and can be resolved", { timeout: 300_000 }, async () => {
    const ada = await external("000");
    const pull = await prod.call("POST", "/transfer-in", { source: { accountId: ada.id }, destination: { accountId: usd.id }, amount: 5_000 });
    expect(pull.status, JSON.stringify(pull.body)).toBe(201);
    await settleUntil(pull.body.id, "COMPLETED");
    const paid = await prod.call("POST", "/transfer-out", { source: { accountId: usd.id }, destination: { accountId: ada.id }, amount: 1_200 }, { "idempotency-key": "recon-e2e-1" });
    expect(paid.status, JSON.stringify(paid.body)).toBe(201);
    const paidTx = await settleUntil(paid.body.id, "COMPLETED");

    // Day 1: the bank booked the pull's money and the payout, as Corridor did.
    const day1 = bankDay(paidTx.settledAt);
    statement(day1, [
      { credit: true, cents: 5_000n, trace: traceOf(5_000n) },
      { credit: false, cents: 1_200n, trace: traceOf(1_200n) },
    ]);
    const [first] = await reportsUntil(1);
    expect(first).toMatchObject({ connector: "ach-nacha", account: ACCOUNT, statementDate: day1, status: "CLEAN", entryCount: 2, matchedCount: 2, breakCount: 0 });

    // Day 2: a payout of 7.00 the bank booked as 7.50.
    const second = await prod.call("POST", "/transfer-out", { source: { accountId: usd.id }, destination: { accountId: ada.id }, amount: 700 }, { "idempotency-key": "recon-e2e-2" });
    expect(second.status, JSON.stringify(second.body)).toBe(201);
    const secondTx = await settleUntil(second.body.id, "COMPLETED");
    const day2 = bankDay(secondTx.settledAt);
    const day2File = statement(day2, [{ credit: false, cents: 750n, trace: traceOf(700n) }]);
    const reports = await reportsUntil(2);
    const broken = reports.find((r) => r.status === "BREAKS")!;
    expect(broken).toMatchObject({ statementDate: day2, entryCount: 1, matchedCount: 0, breakCount: 1, openBreakCount: 1 });
    const { breaks } = await admin.getReconciliationReport({ reportId: broken.reportId });
    expect(breaks).toEqual([expect.objectContaining({ kind: "AMOUNT_MISMATCH", transactionId: second.body.id, ledgerAmount: 700n, statementAmount: 750n, statementDirection: "DEBIT" })]);
    expect((await admin.listReconciliationReports({ status: "BREAKS" })).reports.map((r) => r.reportId)).toEqual([broken.reportId]);

    // The bank sends the same statement again under another name: read and archived, reconciled once.
    writeFileSync(join(server.localRoot, "outbox", "AGAIN.txt"), day2File);
    const deadline = Date.now() + 60_000;
    while (!(await ach.db.selectFrom("ach_bank_files").select("status").where("file_name", "=", "AGAIN.txt").where("status", "=", "PROCESSED").executeTakeFirst())) {
      if (Date.now() > deadline) throw new Error("the connector did not read the statement sent again");
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(JSON.parse((await ach.db.selectFrom("ach_bank_files").select("detail").where("file_name", "=", "AGAIN.txt").executeTakeFirstOrThrow()).detail)).toMatchObject({ statements: 0, duplicates: 1 });
    expect((await admin.listReconciliationReports({ connector: achConnector.name })).reports).toHaveLength(2);

    // The operator resolves the break.
    const resolved = await admin.resolveReconciliationBreak({ breakId: breaks[0]!.breakId, note: "bank fee of 0.50 on the payout, booked by hand" });
    expect(resolved.report).toMatchObject({ reportId: broken.reportId, status: "RESOLVED", openBreakCount: 0 });
  });
});
