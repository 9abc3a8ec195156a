import { RAIL_STATEMENTS_TOPIC, createNoticePublisher, createOutcomePublisher, createStatementPublisher, decodeStatement, loadConnectorConfig, type RailInstruction } from "@corridor/connector";
import { ManualClock, createLogger, newId, type DatabaseHandle } from "@corridor/kit";
import { openServiceTestDatabase } from "@corridor/kit/testing";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sftpServerRequired, sftpServerUnavailableReason, startSftpServer, type SftpTestServer } from "../../../test/infra/sftp/sshd.js";
import { achConfigSchema, type AchConfig } from "../src/config.js";
import { achConnector, MIGRATIONS_DIR, SCHEMA } from "../src/connector.js";
import { acceptInstruction, buildDueFiles, completeSettled, completionTime, readBankFiles, uploadFiles, type EngineDeps } from "../src/engine.js";
import { SftpTransport } from "@corridor/connector/bank-files";
import { bankReadsUpload, bankWritesReturnFile } from "./bank/simulator.js";
import { writeBankBai2 } from "./bank/bai2-writer.js";

const baseEnv = {
  ACH_ODFI_ROUTING: "121042882",
  ACH_IMMEDIATE_ORIGIN: "1234567890",
  ACH_IMMEDIATE_ORIGIN_NAME: "Corridor Test",
  ACH_COMPANY_NAME: "Corridor",
  ACH_COMPANY_ID: "1234567890",
  ACH_SFTP_HOST: "127.0.0.1",
  ACH_SFTP_USERNAME: "corridor",
  ACH_SFTP_HOST_KEY: "SHA256:AAAA",
};

describe("ACH connector settings", () => {
  it("takes the SFTP private key from a secret file (ACH_SFTP_PRIVATE_KEY_FILE)", () => {
    const dir = mkdtempSync(join(tmpdir(), "ach-secret-"));
    writeFileSync(join(dir, "key"), "-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n-----END OPENSSH PRIVATE KEY-----\n");
    const c = loadConnectorConfig(achConnector, { ...baseEnv, ACH_SFTP_PRIVATE_KEY_FILE: join(dir, "key") });
    expect(c.ACH_SFTP_PRIVATE_KEY).toContain("BEGIN OPENSSH PRIVATE KEY");
    expect(c.ACH_CUTOFF_TIMES).toEqual(["10:00", "13:00", "15:30", "20:00"]);
  });

  it("refuses settings with neither a password nor a key, a bad ODFI routing number or a same-day cut-off that is not a cut-off, listing each, and no secret in the message", () => {
    let message = "";
    try {
      loadConnectorConfig(achConnector, { ...baseEnv, ACH_ODFI_ROUTING: "121042883", ACH_SAME_DAY_CUTOFFS: "09:00", ACH_SFTP_PRIVATE_KEY_PASSPHRASE: "s3cret-pass" });
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toMatch(/ACH_ODFI_ROUTING/);
    expect(message).toMatch(/ACH_SFTP_PASSWORD: set ACH_SFTP_PASSWORD\(_FILE\) or ACH_SFTP_PRIVATE_KEY\(_FILE\)/);
    expect(message).toMatch(/ACH_SAME_DAY_CUTOFFS: 09:00 is not one of ACH_CUTOFF_TIMES/);
    expect(message).not.toContain("s3cret-pass");
  });

  it("a payout completes at the settlement time of its effective date; a pull only after the availability days (banking days)", () => {
    const c = achConfigSchema.parse({ ...baseEnv, ACH_SFTP_PASSWORD: "x" });
    expect(completionTime(c, "PAYOUT", "2026-11-25").toISOString()).toBe("2026-11-25T22:00:00.000Z"); // 17:00 New York
    expect(completionTime(c, "PULL", "2026-11-25").toISOString()).toBe("2026-11-30T22:00:00.000Z"); // +2 banking days over Thanksgiving and the weekend
  });
});

const unavailable = sftpServerUnavailableReason();

describe.skipIf(unavailable !== null && !sftpServerRequired)(`ACH files: exactly once${unavailable ? ` — ${sftpServerRequired ? "cannot run" : "skipped"}: ${unavailable}` : ""}`, () => {
  let server: SftpTestServer;
  let handle: DatabaseHandle;
  let db: Kysely<any>;
  let drop: () => Promise<void>;
  const clock = new ManualClock("2026-01-05T14:00:00.000Z"); // Monday 09:00 in New York
  let config: AchConfig;
  let deps: EngineDeps;
  let transport: SftpTransport;

  beforeAll(async () => {
    server = await startSftpServer();
    ({ db: handle, drop } = await openServiceTestDatabase({ schema: SCHEMA, migrationsDir: MIGRATIONS_DIR }));
    db = handle.forSchema<any>(SCHEMA);
    config = achConfigSchema.parse({
      ...baseEnv,
      ACH_SFTP_PORT: String(server.port),
      ACH_SFTP_USERNAME: server.username,
      ACH_SFTP_PRIVATE_KEY: server.privateKey,
      ACH_SFTP_HOST_KEY: server.hostPublicKey,
    });
    transport = new SftpTransport({
      host: server.host, port: server.port, username: server.username, privateKey: server.privateKey, hostKey: server.hostPublicKey,
      inboxDir: server.remotePath("inbox"), outboxDir: server.remotePath("outbox"), archiveDir: server.remotePath("archive"), timeoutMs: 10_000,
    });
    deps = { db, clock, log: createLogger("ach-engine-test", "silent"), config, outcomes: createOutcomePublisher({ connector: "ach-nacha", clock }), notices: createNoticePublisher({ connector: "ach-nacha", clock }), statements: createStatementPublisher({ connector: "ach-nacha", clock }), transport };
  });
  afterAll(async () => {
    await drop?.();
    await server?.stop();
  });

  const instruct = async (over: Partial<RailInstruction> & { accountNumber?: string } = {}) => {
    const i: RailInstruction = {
      instructionId: newId("Event"), occurredAt: clock.now(), platformId: "Platform:p1", environment: "PRODUCTION", connector: "ach-nacha",
      transactionId: newId("Transaction"), direction: "PAYOUT", kind: "TRANSFER", amount: 10_000n, currency: "USD", paymentRail: "ACH",
      externalAccountId: newId("ExternalAccount"), reference: "TXN-1", umaAddress: "",
      accountInfo: { accountNumber: over.accountNumber ?? "55550000", routingNumber: "231380104", bankAccountType: "CHECKING", beneficiary: { beneficiaryType: "INDIVIDUAL", fullName: "Jane Doe" } },
      ...over,
    };
    await db.transaction().execute((trx) => acceptInstruction(deps, i, trx));
    return i;
  };
  const outcomes = async () => (await db.selectFrom("connector_outcomes").select(["transaction_id", "status", "reason"]).orderBy("transaction_id").orderBy("sequence").execute()) as Array<{ transaction_id: string; status: string; reason: string }>;

  it("an upload that dies after the bank got the file is recorded once on the retry, never sent twice; each entry is in exactly one file", async () => {
    const a = await instruct();
    const b = await instruct({ direction: "PULL", amount: 2_500n });
    const c = await instruct({ accountInfo: { accountNumber: "77", routingNumber: "021200025", bankAccountType: "SAVINGS", beneficiary: { beneficiaryType: "BUSINESS", fullName: "Acme LLC" } } });
    expect(await buildDueFiles(deps)).toEqual([]); // before the 10:00 cut-off
    clock.set("2026-01-05T15:00:01.000Z");
    expect(await buildDueFiles(deps)).toEqual(["CORRIDOR-20260105-1000-A.ach"]);
    expect(await buildDueFiles(deps)).toEqual([]);

    // The process dies between the bank's rename and the record of the upload.
    const dying = { ...transport, upload: async (name: string, content: Buffer) => { await transport.upload(name, content); throw new Error("killed after the upload"); } } as unknown as SftpTransport;
    await expect(uploadFiles({ ...deps, transport: dying })).rejects.toThrow(/killed after the upload/);
    expect(await outcomes()).toEqual([]);
    expect((await db.selectFrom("ach_files").select("status").executeTakeFirstOrThrow()).status).toBe("UPLOADING");

    // The restarted connector finds the same bytes there and records them without sending again.
    expect(await uploadFiles(deps)).toEqual(["CORRIDOR-20260105-1000-A.ach"]);
    expect(await uploadFiles(deps)).toEqual([]);
    const inbox = readdirSync(join(server.localRoot, "inbox")).filter((n) => !n.startsWith("."));
    expect(inbox).toEqual(["CORRIDOR-20260105-1000-A.ach"]);
    const seen = bankReadsUpload(readFileSync(join(server.localRoot, "inbox", inbox[0]!), "latin1"));
    expect(seen.map((e) => [e.secCode, e.transactionCode, e.amount])).toEqual([
      ["CCD", "32", 10_000n], // batches by SEC code and direction: CCD payouts, PPD payouts, PPD pulls
      ["PPD", "22", 10_000n],
      ["PPD", "27", 2_500n],
    ]);
    expect(new Set(seen.map((e) => e.traceNumber)).size).toBe(3);
    const ids = [a, b, c].map((i) => i.transactionId).sort();
    expect(await outcomes()).toEqual(ids.map((id) => ({ transaction_id: id, status: "PROCESSING", reason: "" })));
  });

  it("instructions after a cut-off go to the next window's file, with the next file ID modifier; one over the same-day limit waits for the next-day window", async () => {
    await instruct(); // 10:00:01 New York: the 13:00 window
    await instruct({ amount: 100_000_001n }); // over $1,000,000: the 20:00 (next-day) window
    clock.set("2026-01-05T18:00:00.000Z");
    expect(await buildDueFiles(deps)).toEqual(["CORRIDOR-20260105-1300-B.ach"]);
    clock.set("2026-01-06T01:00:00.000Z");
    expect(await buildDueFiles(deps)).toEqual(["CORRIDOR-20260105-2000-C.ach"]);
    const late = await db.selectFrom("ach_entries").select(["effective_date"]).where("amount", "=", 100_000_001n).executeTakeFirstOrThrow();
    expect(late.effective_date).toBe("2026-01-06");
  });

  it("refuses an instruction ACH cannot carry with a REJECTED outcome and no entry", async () => {
    const bad = await instruct({ accountNumber: "", accountInfo: { accountNumber: "1", routingNumber: "231380105" } });
    const eur = await instruct({ currency: "EUR" });
    const rows = await db.selectFrom("connector_outcomes").select(["transaction_id", "status", "reason"]).where("transaction_id", "in", [bad.transactionId, eur.transactionId]).execute();
    expect(rows.map((r: { reason: string; status: string }) => [r.status, r.reason]).sort()).toEqual([["REJECTED", "CURRENCY_NOT_SUPPORTED"], ["REJECTED", "INVALID_ROUTING_NUMBER"]]);
    expect(await db.selectFrom("ach_entries").select("transaction_id").where("transaction_id", "in", [bad.transactionId, eur.transactionId]).execute()).toEqual([]);
  });

  it("refuses a RETURN instruction (contract 1.3) it cannot turn into a return entry with a REJECTED outcome and no entry: unknown original entry, bad reason, no returned credit", async () => {
    const credit = { bankEntryId: "260105-5550002222-1-091000019999999", reason: "R23", paymentRail: "ACH", senderName: "WRONG PAYER", senderAccount: "5550002222", senderRouting: "09100001", reference: "NOT OURS", creditedAccount: "55550000", creditedRouting: "121042882", valueDate: "2026-01-05", suspenseItemId: newId("RailNotice") };
    const ret = { kind: "RETURN" as const, platformId: "", externalAccountId: "", accountInfo: {}, amount: 4_321n };
    const unknown = await instruct({ ...ret, returnedCredit: credit });
    const badReason = await instruct({ ...ret, returnedCredit: { ...credit, reason: "X1" } });
    const none = await instruct({ ...ret });
    const ids = [unknown.transactionId, badReason.transactionId, none.transactionId];
    const rows = (await db.selectFrom("connector_outcomes").select(["transaction_id", "status", "reason"]).where("transaction_id", "in", ids).execute()) as Array<{ transaction_id: string; status: string; reason: string }>;
    expect(ids.map((id) => rows.filter((r) => r.transaction_id === id).map((r) => `${r.status} ${r.reason}`))).toEqual([["REJECTED ORIGINAL_ENTRY_NOT_FOUND"], ["REJECTED INVALID_RETURN_REASON"], ["REJECTED RETURN_WITHOUT_CREDIT"]]);
    expect(await db.selectFrom("ach_entries").select("transaction_id").where("transaction_id", "in", ids).execute()).toEqual([]);
  });

  it("reads the bank's returns once: before completion a FAILED outcome, after it RETURNED; a NOC is kept with its corrections; a return repeated in a later file changes nothing; a file it cannot read is left for the operator", async () => {
    clock.set("2026-01-07T14:00:00.000Z"); // Wednesday 09:00 New York
    const early = await instruct({ direction: "PULL", amount: 4_000n, accountNumber: "40000003" });
    const late = await instruct({ amount: 3_000n, accountNumber: "30000001" });
    const noc = await instruct({ amount: 2_000n, accountNumber: "20000009" });
    clock.set("2026-01-07T15:00:01.000Z");
    const [name] = await buildDueFiles(deps);
    await uploadFiles(deps);
    const seen = bankReadsUpload(readFileSync(join(server.localRoot, "inbox", name!), "latin1"));
    const byAccount = (n: string) => seen.find((e) => e.accountNumber === n)!;
    const outbox = (file: string, text: string) => writeFileSync(join(server.localRoot, "outbox", file), text);
    const statuses = async (id: string) => ((await db.selectFrom("connector_outcomes").select(["status", "reason"]).where("transaction_id", "=", id).orderBy("sequence").execute()) as Array<{ status: string; reason: string }>).map((o) => `${o.status}${o.reason ? ` ${o.reason}` : ""}`);

    // The payout settles at 17:00; the pull is still waiting for its availability days when R01 and the NOC arrive.
    clock.set("2026-01-07T22:00:00.000Z");
    await completeSettled(deps);
    expect(await statuses(late.transactionId)).toEqual(["PROCESSING", "COMPLETED"]);
    expect(await statuses(early.transactionId)).toEqual(["PROCESSING"]);
    outbox("RET-1.ach", bankWritesReturnFile({ bankRouting: "231380104", odfiRouting: "121042882", date: "260108", items: [
      { entry: byAccount("40000003"), code: "R01" },
      { entry: byAccount("20000009"), code: "C03", correctedData: "021200025   99887766" },
    ] }));
    outbox("GARBAGE.ach", "this is not a NACHA file\n");
    expect(await readBankFiles(deps)).toEqual(["RET-1.ach"]);
    expect(await statuses(early.transactionId)).toEqual(["PROCESSING", "FAILED R01"]);
    const kept = await db.selectFrom("ach_bank_items").select(["kind", "code", "transaction_id", "detail"]).where("kind", "=", "NOC").execute();
    expect(kept).toEqual([{ kind: "NOC", code: "C03", transaction_id: noc.transactionId, detail: { corrections: { routingNumber: "021200025", accountNumber: "99887766" }, refused: false } }]);
    expect(await statuses(noc.transactionId)).toEqual(["PROCESSING", "COMPLETED"]);
    expect(await db.selectFrom("ach_bank_files").select(["file_name", "status"]).orderBy("file_name").execute()).toEqual([
      { file_name: "GARBAGE.ach", status: "REFUSED" },
      { file_name: "RET-1.ach", status: "PROCESSED" },
    ]);
    expect(readdirSync(join(server.localRoot, "outbox")).sort()).toEqual(["GARBAGE.ach"]);
    expect(readdirSync(join(server.localRoot, "archive"))).toContain("RET-1.ach");

    // After completion the payout is returned; the same return again in another file is not a second outcome.
    const r01 = bankWritesReturnFile({ bankRouting: "231380104", odfiRouting: "121042882", date: "260112", items: [{ entry: byAccount("30000001"), code: "R01" }] });
    outbox("RET-2.ach", r01);
    outbox("RET-3.ach", r01);
    expect(await readBankFiles(deps)).toEqual(["RET-2.ach", "RET-3.ach"]);
    expect(await statuses(late.transactionId)).toEqual(["PROCESSING", "COMPLETED", "RETURNED R01"]);
    expect(await readBankFiles(deps)).toEqual([]);
  });

  it("reads the bank's BAI2 statements: each final account statement reported once, entries marked with our transaction by trace number; a statement that does not add up is left for the operator", async () => {
    clock.set("2026-01-12T14:00:00.000Z"); // Monday 09:00 New York
    const pay = await instruct({ amount: 6_100n, accountNumber: "61000001" });
    clock.set("2026-01-12T15:00:01.000Z");
    const [name] = await buildDueFiles(deps);
    await uploadFiles(deps);
    const seen = bankReadsUpload(readFileSync(join(server.localRoot, "inbox", name!), "latin1"));
    const trace = seen.find((e) => e.accountNumber === "61000001")!.traceNumber;
    const statement = (tamper?: (r: string[][]) => void) =>
      writeBankBai2({
        sender: "231380104", receiver: "CORRIDOR", fileId: "0112", asOf: "2026-01-12", createdAt: new Date("2026-01-13T05:00:00Z"), tamper,
        accounts: [{ accountNumber: "9988776655", openingLedger: 500_000n, closingLedger: 500_000n - 6_100n + 900n, details: [
          { typeCode: "455", cents: 6_100n, bankReference: "BK1", customerReference: trace, text: "ACH ORIGINATION" },
          { typeCode: "165", cents: 900n, bankReference: "BK2", customerReference: "", text: "INCOMING ACH CREDIT" },
        ] }],
      });
    writeFileSync(join(server.localRoot, "outbox", "STMT-0112.bai"), statement());
    writeFileSync(join(server.localRoot, "outbox", "STMT-0112-BAD.bai"), statement((r) => (r.find((x) => x[0] === "49")![1] = "7")));
    expect(await readBankFiles(deps)).toEqual(["STMT-0112.bai"]);
    const published = async () => (await db.selectFrom("outbox").select(["payload"]).where("topic", "=", RAIL_STATEMENTS_TOPIC).execute()).map((r: { payload: Uint8Array }) => decodeStatement(r.payload));
    const [m] = await published();
    expect(m).toMatchObject({ connector: "ach-nacha", environment: "PRODUCTION", account: "9988776655", statementDate: "2026-01-12", timeZone: "America/New_York", openingBooked: 500_000n, closingBooked: 494_800n, sourceFile: "STMT-0112.bai" });
    expect(m!.entries.map((e) => [e.bankEntryId, e.direction, e.amount, e.traceNumber, e.transactionId])).toEqual([
      ["BK1", "DEBIT", 6_100n, trace, pay.transactionId],
      ["BK2", "CREDIT", 900n, "", ""],
    ]);
    const files = await db.selectFrom("ach_bank_files").select(["file_name", "status", "detail"]).where("file_name", "like", "STMT-%").orderBy("file_name").execute();
    expect(files.map((f: { file_name: string; status: string }) => [f.file_name, f.status])).toEqual([["STMT-0112-BAD.bai", "REFUSED"], ["STMT-0112.bai", "PROCESSED"]]);
    expect(files[0]!.detail).toMatch(/control total 7 but its records add up to/);
    // The bank sends the same statement again under another name: read, archived, not reported twice.
    writeFileSync(join(server.localRoot, "outbox", "STMT-0112-AGAIN.bai"), statement());
    expect(await readBankFiles(deps)).toEqual(["STMT-0112-AGAIN.bai"]);
    expect(await published()).toHaveLength(1);
  });

  it("when the bank collects uploads from its inbox, an upload interrupted at an unknown point is held for the operator, never sent again; one found in the inbox is recorded", async () => {
    clock.set("2026-01-08T14:00:00.000Z");
    await instruct({ amount: 1_111n, accountNumber: "11112222" });
    clock.set("2026-01-08T15:00:01.000Z");
    const [held] = await buildDueFiles(deps);
    const collecting = { ...deps, config: { ...config, ACH_SFTP_BANK_COLLECTS_UPLOADS: true } };
    // The process died mid-upload (status UPLOADING) and the file is not in the inbox: collected, or never sent?
    await db.updateTable("ach_files").set({ status: "UPLOADING" }).where("file_name", "=", held!).execute();
    expect(await uploadFiles(collecting)).toEqual([]);
    expect(await db.selectFrom("ach_files").select(["status", "detail"]).where("file_name", "=", held!).executeTakeFirstOrThrow()).toMatchObject({ status: "HELD", detail: expect.stringMatching(/ask the bank/) });
    expect(readdirSync(join(server.localRoot, "inbox"))).not.toContain(held);

    clock.set("2026-01-08T18:00:01.000Z");
    await instruct({ amount: 2_222n, accountNumber: "22223333" });
    clock.set("2026-01-08T19:00:01.000Z");
    await instruct({ amount: 2_223n, accountNumber: "22223334" });
    clock.set("2026-01-08T20:30:01.000Z"); // past the 15:30 cut-off
    const [found] = await buildDueFiles(deps);
    await db.updateTable("ach_files").set({ status: "UPLOADING" }).where("file_name", "=", found!).execute();
    const content = (await db.selectFrom("ach_files").select("content").where("file_name", "=", found!).executeTakeFirstOrThrow()).content as string;
    await transport.upload(found!, Buffer.from(content, "latin1")); // it did arrive before the process died
    expect(await uploadFiles(collecting)).toEqual([found]);
  });
});
