import { createClient } from "@connectrpc/connect";
import { achConnector } from "@corridor/connector-ach-nacha";
import { ManualClock } from "@corridor/kit";
import { LedgerAdminService } from "@corridor/proto/corridor/ledger/v1/ledger_admin_service_pb.js";
import type { RunningConnector } from "@corridor/connector";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sftpBank, type SftpBank } from "../../connectors/ach-nacha/test/bank/sftp-bank.js";
import { sftpServerRequired, sftpServerUnavailableReason, startSftpServer, type SftpTestServer } from "../infra/sftp/sshd.js";
import { E2E_FUNDING_BANK_ACCOUNTS } from "../infra/split-setup.js";
import { eventually, mode, skipReason, startTestSystem, type Caller, type TestSystem } from "./harness.js";
import { balanceOf, platformAccount, usdAccountInfo } from "./ledger-helpers.js";

/**
 * Issue 24 item 5 through the public API (docs/connectors.md "Notices"): a PRODUCTION platform bound
 * to the ACH connector receives an ACH credit its bank reports in a NACHA file on the SFTP server:
 * credited to the internal account its funding reference names (INCOMING transaction, webhooks,
 * balance); a credit without a reference waits in suspense until the operator assigns it
 * (LedgerAdminService); a NOC the bank sends for a payout corrects the external account and the
 * platform gets EXTERNAL_ACCOUNT_UPDATED.
 */
const sftpUnavailable = sftpServerUnavailableReason();
const skip = skipReason() || (sftpUnavailable && !sftpServerRequired ? `no SFTP server: ${sftpUnavailable}` : "");

describe.skipIf(skip)(`ACH deposits, suspense and notifications of change end to end (${mode})${skip ? ` — skipped: ${skip}` : ""}`, () => {
  let system: TestSystem;
  let server: SftpTestServer;
  let bank: SftpBank;
  let ach: RunningConnector;
  let prod: Caller;
  let usd: { id: string; fundingPaymentInstructions: { accountOrWalletInfo: { accountNumber: string; reference: string } }[] };
  let admin: ReturnType<typeof createClient<typeof LedgerAdminService>>;
  const clock = new ManualClock(new Date());
  const ODFI = "121042882";
  const today = () => clock.now().toISOString().slice(2, 10).replaceAll("-", "");

  beforeAll(async () => {
    server = await startSftpServer();
    bank = sftpBank({ root: server.localRoot, bankRouting: "231380104", odfiRouting: ODFI });
    // Production accounts are paid into the operator's bank (split: test/infra/split-setup.ts sets the same).
    if (mode === "embedded") process.env.LEDGER_FUNDING_BANK_ACCOUNTS = E2E_FUNDING_BANK_ACCOUNTS;
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
    prod = await system.createPlatform({ environment: "PRODUCTION", name: "ach deposits e2e" });
    usd = await platformAccount(prod);
    admin = createClient(LedgerAdminService, system.transportFor("ledger"));
    await admin.bindPlatformRail({ platformId: prod.platformId, currency: "USD", paymentRail: "ACH", connector: achConnector.name });
  }, 180_000);
  afterAll(async () => {
    await system?.stop();
    await server?.stop();
  });

  const incoming = async () => (await prod.call("GET", "/transactions?type=INCOMING&limit=100")).body.data as { id: string; status: string; amount: { amount: number } | number; destination: { accountId: string } }[];
  const events = async (type: string, id: string) => ((await prod.call("GET", `/events?type=${type}&limit=100`)).body.data as { payload: { data: { id: string } } }[]).filter((e) => e.payload.data.id === id);

  it("a credit with the account's reference is an INCOMING transaction with its webhooks; one without waits in suspense until the operator assigns it", { timeout: 120_000 }, async () => {
    const funding = usd.fundingPaymentInstructions[0]!.accountOrWalletInfo;
    expect(funding.reference).toMatch(/^DEP-/);
    bank.sendCredits(
      [
        { accountNumber: funding.accountNumber, amount: 2_500n, identification: funding.reference, name: "CORRIDOR", companyName: "ACME PAYROLL", companyId: "9876543210" },
        { accountNumber: funding.accountNumber, amount: 1_234n, identification: "INVOICE 77", name: "CORRIDOR", companyName: "JOHN SMITH", companyId: "5550001111" },
      ],
      today(),
    );
    const [deposit] = await eventually(async () => {
      const txs = await incoming();
      return txs.length > 0 ? txs : undefined;
    }, 60_000);
    expect(deposit).toMatchObject({ status: "COMPLETED", destination: expect.objectContaining({ accountId: usd.id }) });
    expect(await balanceOf(prod)).toBe(2_500);
    await eventually(async () => ((await events("INCOMING_PAYMENT_COMPLETED", deposit!.id)).length > 0 ? true : undefined), 30_000);
    await eventually(async () => ((await events("INTERNAL_ACCOUNT_BALANCE_UPDATED", usd.id)).length > 0 ? true : undefined), 30_000);

    const item = await eventually(async () => (await admin.listSuspenseItems({ status: "SUSPENSE" })).items.find((i) => i.amount === 1_234n), 30_000);
    expect(item).toMatchObject({ connector: "ach-nacha", currency: "USD", paymentRail: "ACH", suspenseReason: "UNKNOWN_REFERENCE", reference: "INVOICE 77", senderName: "JOHN SMITH" });
    const assigned = (await admin.assignSuspenseItem({ id: item.id, internalAccountId: usd.id, note: "e2e" })).item!;
    expect(assigned).toMatchObject({ status: "CREDITED", internalAccountId: usd.id });
    expect((await admin.assignSuspenseItem({ id: item.id, internalAccountId: usd.id })).item!.transactionId).toBe(assigned.transactionId);
    expect(await balanceOf(prod)).toBe(3_734);
    const assignedTx = (await prod.call("GET", `/transactions/${assigned.transactionId}`)).body;
    expect(assignedTx).toMatchObject({ type: "INCOMING", status: "COMPLETED" });
    await eventually(async () => ((await events("INCOMING_PAYMENT_COMPLETED", assigned.transactionId)).length > 0 ? true : undefined), 30_000);
    // The books: every currency sums to zero (the money came from the rail's clearing account).
    const trial = (await admin.getTrialBalance({ platformId: prod.platformId })).currencies.find((c) => c.currency === "USD")!;
    expect(trial).toMatchObject({ balanceSum: 0n, postingSum: 0n, mismatchedAccountCount: 0n });
  });

  it("the operator returns an unmatched credit: one RETURN instruction; the ACH connector files a return entry the bank reads; the item ends RETURNED, the books untouched", { timeout: 240_000 }, async () => {
    const funding = usd.fundingPaymentInstructions[0]!.accountOrWalletInfo;
    const before = (await admin.getTrialBalance({ platformId: "" })).currencies.find((c) => c.currency === "USD")!;
    const balance = await balanceOf(prod);
    bank.sendCredits([{ accountNumber: funding.accountNumber, amount: 4_321n, identification: "NOT OURS 9", name: "CORRIDOR", companyName: "WRONG PAYER", companyId: "5550002222" }], today());
    const item = await eventually(async () => (await admin.listSuspenseItems({ status: "SUSPENSE" })).items.find((i) => i.amount === 4_321n), 60_000);
    const originalTrace = item.bankEntryId.split("-").pop()!;
    const requested = (await admin.returnSuspenseItem({ id: item.id, reason: "R23", note: "e2e" })).item!;
    expect(requested).toMatchObject({ status: "RETURN_REQUESTED", returnReason: "R23" });
    expect((await admin.returnSuspenseItem({ id: item.id })).item!.returnTransactionId).toBe(requested.returnTransactionId);
    // Through the bus to the connector: a return entry in the next window's file, uploaded to the bank, completed at settlement.
    const deadline = Date.now() + 200_000;
    for (;;) {
      const now = (await admin.getSuspenseItem({ id: item.id })).item!;
      if (now.status !== "RETURN_REQUESTED") break;
      if (Date.now() > deadline) throw new Error(`return not completed: ${JSON.stringify(now)}`);
      await bank.step(async () => false, today());
      const busy = await ach.db.selectFrom("ach_entries").select("transaction_id").where("status", "in", ["QUEUED", "FILED", "SUBMITTED"]).executeTakeFirst();
      if (!bank.outboxBusy() && busy) clock.advance(30 * 60_000);
      await new Promise((r) => setTimeout(r, 50));
    }
    expect((await admin.getSuspenseItem({ id: item.id })).item!).toMatchObject({ status: "RETURNED", returnDetail: "" });
    // The bank (node-nacha and its own checks) received exactly one return entry: code 21, the original amount, R23 and the original trace.
    const returns = [...bank.accepted.values()].filter((e) => e.transactionCode === "21" || e.transactionCode === "31");
    expect(returns).toHaveLength(1);
    expect(returns[0]).toMatchObject({ transactionCode: "21", amount: 4_321n, secCode: "PPD" });
    expect(returns[0]!.addenda).toContain(`R23${originalTrace}`);
    const entry = await ach.db.selectFrom("ach_entries").select(["status", "file_name"]).where("transaction_id", "=", requested.returnTransactionId).execute();
    expect(entry).toEqual([{ status: "COMPLETED", file_name: expect.any(String) }]);
    // No money moved on the books: the credit never entered them.
    expect(await balanceOf(prod)).toBe(balance);
    const after = (await admin.getTrialBalance({ platformId: "" })).currencies.find((c) => c.currency === "USD")!;
    expect(after).toMatchObject({ balanceSum: 0n, postingSum: before.postingSum, mismatchedAccountCount: 0n });
    // Returning it again changes nothing.
    expect((await admin.returnSuspenseItem({ id: item.id })).item!.status).toBe("RETURNED");
  });

  it("a NOC for a payout corrects the external account's number and fires EXTERNAL_ACCOUNT_UPDATED", { timeout: 240_000 }, async () => {
    const res = await prod.call("POST", "/platform/external-accounts", { currency: "USD", accountInfo: usdAccountInfo("009") }); // the test bank sends C01 for "…0009"
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const ext = res.body as { id: string; accountInfo: { accountNumber: string } };
    const paid = await prod.call("POST", "/transfer-out", { source: { accountId: usd.id }, destination: { accountId: ext.id }, amount: 300 }, { "idempotency-key": "ach-noc-out" });
    expect(paid.status, JSON.stringify(paid.body)).toBe(201);
    const deadline = Date.now() + 200_000;
    for (;;) {
      const now = (await prod.call("GET", `/platform/external-accounts/${ext.id}`)).body;
      if (now.accountInfo.accountNumber === "99990000") break;
      if (Date.now() > deadline) throw new Error(`external account not corrected: ${JSON.stringify(now.accountInfo)}`);
      const { wrote } = await bank.step(async () => false, today());
      const busy = await ach.db.selectFrom("ach_entries").select("transaction_id").where("status", "in", ["QUEUED", "FILED"]).executeTakeFirst();
      if (!wrote && !bank.outboxBusy() && busy) clock.advance(30 * 60_000);
      await new Promise((r) => setTimeout(r, 50));
    }
    const corrected = (await prod.call("GET", `/platform/external-accounts/${ext.id}`)).body;
    expect(corrected.accountInfo).toMatchObject({ accountNumber: "99990000", routingNumber: "021000021", bankAccountType: "CHECKING" });
    const [event] = await eventually(async () => {
      const e = await events("EXTERNAL_ACCOUNT_UPDATED", ext.id);
      return e.length > 0 ? e : undefined;
    }, 30_000);
    expect(event!.payload).toMatchObject({ type: "EXTERNAL_ACCOUNT_UPDATED", data: { id: ext.id, accountInfo: expect.objectContaining({ accountNumber: "99990000" }) } });
  });
});
