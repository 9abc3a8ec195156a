// The bank's answers to our files (acknowledgements, files sent back) and the matching of returns
// to our entries, over the SFTP test server with the bank simulator writing the bank's files.
import { createNoticePublisher, createOutcomePublisher, createStatementPublisher, RAIL_NOTICES_TOPIC, type RailInstruction } from "@corridor/connector";
import { ManualClock, createLogger, newId, type DatabaseHandle } from "@corridor/kit";
import { openServiceTestDatabase } from "@corridor/kit/testing";
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sftpServerRequired, sftpServerUnavailableReason, startSftpServer, type SftpTestServer } from "../../../test/infra/sftp/sshd.js";
import { achConfigSchema } from "../src/config.js";
import { MIGRATIONS_DIR, SCHEMA } from "../src/connector.js";
import { acceptInstruction, buildDueFiles, completeSettled, readBankFiles, uploadFiles, type EngineDeps } from "../src/engine.js";
import { acknowledgementOf } from "../src/acknowledgements.js";
import { SftpTransport } from "@corridor/connector/bank-files";
import { bankReadsUpload, bankSendsFileBack, bankWritesAcknowledgement, bankWritesIncomingCreditFile, bankWritesReturnFile } from "./bank/simulator.js";
import { achFixture as fixture } from "./fixtures.js";

const unavailable = sftpServerUnavailableReason();

describe("acknowledgement files: what is one", () => {
  it("a real processor's zero-entry file is no acknowledgement of any file of ours unless its header names one; a file with entries never is", () => {
    const zero = acknowledgementOf(readFileSync(fixture("returns/FISERV-ZEROFILE-PIMRET825324_032720_110221.ach")));
    expect(zero?.header).toMatchObject({ immediateDestination: "100067554", immediateOrigin: "182327390", creationDate: "200327", creationTime: "1043", fileIdModifier: " " }); // a blank modifier: names no file of ours
    expect(zero?.control).toEqual({ entryAddendaCount: 0, entryHash: "0000000000", totalDebit: 0n, totalCredit: 0n });
    expect(acknowledgementOf(readFileSync(fixture("returns/return-WEB.ach")))).toBeUndefined();
    expect(acknowledgementOf(readFileSync(fixture("invalid/nonascii.ach")))).toBeUndefined();
    expect(acknowledgementOf(Buffer.from("not a file\n"))).toBeUndefined();
  });
});

describe.skipIf(unavailable !== null && !sftpServerRequired)(`ACH acknowledgements and return matching${unavailable ? ` — ${sftpServerRequired ? "cannot run" : "skipped"}: ${unavailable}` : ""}`, () => {
  let server: SftpTestServer;
  let handle: DatabaseHandle;
  let db: Kysely<any>;
  let drop: () => Promise<void>;
  const clock = new ManualClock("2026-02-02T14:00:00.000Z"); // Monday 09:00 in New York
  let deps: EngineDeps;

  beforeAll(async () => {
    server = await startSftpServer();
    ({ db: handle, drop } = await openServiceTestDatabase({ schema: SCHEMA, migrationsDir: MIGRATIONS_DIR }));
    db = handle.forSchema<any>(SCHEMA);
    const config = achConfigSchema.parse({
      ACH_ODFI_ROUTING: "121042882", ACH_IMMEDIATE_ORIGIN: "1234567890", ACH_IMMEDIATE_ORIGIN_NAME: "Corridor Test", ACH_COMPANY_NAME: "Corridor", ACH_COMPANY_ID: "1234567890",
      ACH_SFTP_HOST: "127.0.0.1", ACH_SFTP_PORT: String(server.port), ACH_SFTP_USERNAME: server.username, ACH_SFTP_PRIVATE_KEY: server.privateKey, ACH_SFTP_HOST_KEY: server.hostPublicKey,
    });
    const transport = new SftpTransport({
      host: server.host, port: server.port, username: server.username, privateKey: server.privateKey, hostKey: server.hostPublicKey,
      inboxDir: server.remotePath("inbox"), outboxDir: server.remotePath("outbox"), archiveDir: server.remotePath("archive"), timeoutMs: 10_000,
    });
    deps = { db, clock, log: createLogger("ach-ack-test", "silent"), config, outcomes: createOutcomePublisher({ connector: "ach-nacha", clock }), notices: createNoticePublisher({ connector: "ach-nacha", clock }), statements: createStatementPublisher({ connector: "ach-nacha", clock }), transport };
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
      accountInfo: { accountNumber: over.accountNumber ?? "55550000", routingNumber: "231380104", bankAccountType: "CHECKING", beneficiary: { beneficiaryType: over.direction === "PULL" ? "BUSINESS" : "INDIVIDUAL", fullName: "Jane Doe" } },
      ...over,
    };
    await db.transaction().execute((trx) => acceptInstruction(deps, i, trx));
    return i;
  };
  const statuses = async (id: string) =>
    ((await db.selectFrom("connector_outcomes").select(["status", "reason"]).where("transaction_id", "=", id).orderBy("sequence").execute()) as Array<{ status: string; reason: string }>).map((o) => `${o.status}${o.reason ? ` ${o.reason}` : ""}`);
  const outbox = (file: string, text: string) => writeFileSync(join(server.localRoot, "outbox", file), text);
  const fileStatus = async (name: string) => (await db.selectFrom("ach_files").select(["status", "acknowledgement"]).where("file_name", "=", name).executeTakeFirstOrThrow()) as { status: string; acknowledgement: string | null };
  const uploaded = (name: string) => readFileSync(join(server.localRoot, "inbox", name), "latin1");
  /** One window's file: instructs, passes its cut-off, builds and uploads it. */
  const fileOf = async (day: string, ...instructions: Array<Partial<RailInstruction> & { accountNumber?: string }>) => {
    clock.set(`${day}T14:00:00.000Z`);
    const made = [];
    for (const i of instructions) made.push(await instruct(i));
    clock.set(`${day}T15:00:01.000Z`);
    const [name] = await buildDueFiles(deps);
    await uploadFiles(deps);
    return { name: name!, made };
  };

  it("an acknowledgement with the bank's count of our file makes it ACCEPTED; one with other totals leaves it for the operator; a repeat changes nothing", async () => {
    const { name, made } = await fileOf("2026-02-02", { amount: 1_000n, accountNumber: "10001" }, { amount: 2_000n, accountNumber: "10002", direction: "PULL" });
    outbox("ACK-BAD.ach", bankWritesAcknowledgement(uploaded(name), { tamper: true }));
    expect(await readBankFiles(deps)).toEqual(["ACK-BAD.ach"]);
    expect(await fileStatus(name)).toEqual({ status: "UPLOADED", acknowledgement: null });
    const bad = await db.selectFrom("ach_bank_files").select(["status", "detail"]).where("file_name", "=", "ACK-BAD.ach").executeTakeFirstOrThrow();
    expect(JSON.parse(bad.detail)).toEqual({ acknowledgement: "TOTALS_DISAGREE", file: name, fields: ["totalCredit"] });

    outbox("ACK-1.ach", bankWritesAcknowledgement(uploaded(name)));
    expect(await readBankFiles(deps)).toEqual(["ACK-1.ach"]);
    expect(await fileStatus(name)).toEqual({ status: "ACCEPTED", acknowledgement: "ACK-1.ach" });
    outbox("ACK-2.ach", bankWritesAcknowledgement(uploaded(name), { totals: "zero" }));
    expect(await readBankFiles(deps)).toEqual(["ACK-2.ach"]);
    expect(await fileStatus(name)).toEqual({ status: "ACCEPTED", acknowledgement: "ACK-1.ach" });
    // An acknowledgement moves no money: the entries stay on their way.
    for (const i of made) expect(await statuses(i.transactionId)).toEqual(["PROCESSING"]);
    expect(readdirSync(join(server.localRoot, "archive"))).toEqual(expect.arrayContaining(["ACK-BAD.ach", "ACK-1.ach", "ACK-2.ach"]));
    // A real processor's zero-entry file that names no file of ours is read as before (nothing in it).
    outbox("FISERV.ach", readFileSync(fixture("returns/FISERV-ZEROFILE-PIMRET825324_032720_110221.ach"), "latin1"));
    expect(await readBankFiles(deps)).toEqual(["FISERV.ach"]);
    expect(JSON.parse((await db.selectFrom("ach_bank_files").select("detail").where("file_name", "=", "FISERV.ach").executeTakeFirstOrThrow()).detail)).toEqual({ returns: 0, nocs: 0, incoming: 0, unmatched: 0 });
  });

  it("a held file the bank acknowledges is released: ACCEPTED, its entries PROCESSING", async () => {
    const { name, made } = await fileOf("2026-02-03", { amount: 3_000n, accountNumber: "30001" });
    // As if the upload had been interrupted with the bank collecting uploads: held for the operator.
    await db.updateTable("ach_files").set({ status: "HELD" }).where("file_name", "=", name).execute();
    await db.updateTable("ach_entries").set({ status: "FILED", completes_at: null }).where("file_name", "=", name).execute();
    outbox("ACK-HELD.ach", bankWritesAcknowledgement(uploaded(name)));
    expect(await readBankFiles(deps)).toEqual(["ACK-HELD.ach"]);
    expect(await fileStatus(name)).toEqual({ status: "ACCEPTED", acknowledgement: "ACK-HELD.ach" });
    expect(await statuses(made[0]!.transactionId)).toEqual(["PROCESSING", "PROCESSING"]);
    expect((await db.selectFrom("ach_entries").select("status").where("transaction_id", "=", made[0]!.transactionId).executeTakeFirstOrThrow()).status).toBe("SUBMITTED");
  });

  it("a file the bank sends back rejects its entries once each (FILE_REJECTED): the whole file REJECTED, some batches PARTIALLY_REJECTED; its entries are never read as credits received", async () => {
    const whole = await fileOf("2026-02-04", { amount: 4_000n, accountNumber: "40001" }, { amount: 4_100n, accountNumber: "40002", direction: "PULL" });
    const back = bankSendsFileBack(uploaded(whole.name), { reason: "R-DUPL" });
    outbox("REJ-1.ach", back);
    expect(await readBankFiles(deps)).toEqual(["REJ-1.ach"]);
    expect(await fileStatus(whole.name)).toEqual({ status: "REJECTED", acknowledgement: "REJ-1.ach" });
    for (const i of whole.made) expect(await statuses(i.transactionId)).toEqual(["PROCESSING", "REJECTED FILE_REJECTED"]);
    outbox("REJ-1-AGAIN.ach", back);
    expect(await readBankFiles(deps)).toEqual(["REJ-1-AGAIN.ach"]);
    for (const i of whole.made) expect(await statuses(i.transactionId)).toEqual(["PROCESSING", "REJECTED FILE_REJECTED"]);
    expect(await db.selectFrom("outbox").select("topic").where("topic", "=", RAIL_NOTICES_TOPIC).execute()).toEqual([]);
    // A completion pass afterwards completes nothing of that file.
    clock.set("2026-02-20T00:00:00.000Z");
    await completeSettled(deps);
    for (const i of whole.made) expect(await statuses(i.transactionId)).toEqual(["PROCESSING", "REJECTED FILE_REJECTED"]);

    const part = await fileOf("2026-02-05", { amount: 5_000n, accountNumber: "50001" }, { amount: 5_100n, accountNumber: "50002", direction: "PULL" });
    const batches = bankReadsUpload(uploaded(part.name));
    expect(batches.map((e) => e.secCode)).toEqual(["CCD", "PPD"]); // the pull (business) is batch 1, the payout batch 2
    outbox("REJ-2.ach", bankSendsFileBack(uploaded(part.name), { keep: (n) => n === 1 }));
    expect(await readBankFiles(deps)).toEqual(["REJ-2.ach"]);
    expect(await fileStatus(part.name)).toEqual({ status: "PARTIALLY_REJECTED", acknowledgement: "REJ-2.ach" });
    expect(await statuses(part.made[1]!.transactionId)).toEqual(["PROCESSING", "REJECTED FILE_REJECTED"]);
    expect(await statuses(part.made[0]!.transactionId)).toEqual(["PROCESSING"]);
  });

  it("a return is matched by its original trace and the entry's identity: another account, RDFI or amount, or an unknown trace, waits in suspense with the reason and moves no money", async () => {
    const { name, made } = await fileOf("2026-02-09", { amount: 6_000n, accountNumber: "60001" }, { amount: 6_100n, accountNumber: "60002" }, { amount: 6_200n, accountNumber: "60003" });
    const seen = bankReadsUpload(uploaded(name));
    const of = (acct: string) => seen.find((e) => e.accountNumber.trim() === acct)!;
    outbox("RET-MATCH.ach", bankWritesReturnFile({ bankRouting: "231380104", odfiRouting: "121042882", date: "260210", items: [
      { entry: { ...of("60001"), accountNumber: "99999" }, code: "R03" }, // the trace is ours, the account is not
      { entry: { ...of("60002"), amount: 1n }, code: "R01" }, // another amount
      { entry: { ...of("60003"), traceNumber: "121042889999999" }, code: "R01" }, // a trace we never sent
      { entry: of("60003"), code: "R02" }, // the real one
    ] }));
    expect(await readBankFiles(deps)).toEqual(["RET-MATCH.ach"]);
    expect(await statuses(made[0]!.transactionId)).toEqual(["PROCESSING"]);
    expect(await statuses(made[1]!.transactionId)).toEqual(["PROCESSING"]);
    expect(await statuses(made[2]!.transactionId)).toEqual(["PROCESSING", "FAILED R02"]);
    const items = await db.selectFrom("ach_bank_items").select(["code", "transaction_id", "suspense_reason"]).where("bank_file", "=", "RET-MATCH.ach").orderBy("line").execute();
    expect(items).toEqual([
      { code: "R03", transaction_id: null, suspense_reason: "ACCOUNT_MISMATCH" },
      { code: "R01", transaction_id: null, suspense_reason: "AMOUNT_MISMATCH" },
      { code: "R01", transaction_id: null, suspense_reason: "UNKNOWN_TRACE" },
      { code: "R02", transaction_id: made[2]!.transactionId, suspense_reason: null },
    ]);
  });

  it("a RETURN instruction finds the credit it returns by its whole bank entry id: the same trace in another batch is another entry; a legacy item that fits twice is ambiguous and refused", async () => {
    clock.set("2026-02-10T14:00:00.000Z");
    const credit = { accountNumber: "9988776655", amount: 7_000n, identification: "DEP-ABC", name: "OPERATOR", companyName: "PAYER ONE", companyId: "1111111111" };
    // Two of the bank's files number their traces from 1 again: the same trace, two entries.
    outbox("IN-1.ach", bankWritesIncomingCreditFile({ bankRouting: "231380104", odfiRouting: "121042882", date: "260210", credits: [credit] }));
    outbox("IN-2.ach", bankWritesIncomingCreditFile({ bankRouting: "231380104", odfiRouting: "121042882", date: "260211", credits: [{ ...credit, companyName: "PAYER TWO", companyId: "2222222222" }] }));
    expect(await readBankFiles(deps)).toEqual(["IN-1.ach", "IN-2.ach"]);
    const trace = "231380100000001";
    const rc = (over: Record<string, string>) => ({ bankEntryId: `260210-1111111111-1-${trace}`, reason: "R23", paymentRail: "ACH", senderName: "PAYER ONE", senderAccount: "1111111111", senderRouting: "23138010", reference: "DEP-ABC", creditedAccount: "9988776655", creditedRouting: "121042882", valueDate: "2026-02-10", suspenseItemId: newId("RailNotice"), ...over });
    const ret = { kind: "RETURN" as const, platformId: "", externalAccountId: "", accountInfo: {}, amount: 7_000n };
    const first = await instruct({ ...ret, returnedCredit: rc({}) });
    const second = await instruct({ ...ret, returnedCredit: rc({ bankEntryId: `260211-2222222222-1-${trace}`, senderName: "PAYER TWO", senderAccount: "2222222222" }) });
    const wrongAmount = await instruct({ ...ret, amount: 7_001n, returnedCredit: rc({}) });
    const entries = await db.selectFrom("ach_entries").select(["transaction_id", "return_of"]).where("transaction_id", "in", [first.transactionId, second.transactionId]).orderBy("created_at").execute();
    expect(entries.map((e: { return_of: { companyName: string } }) => e.return_of.companyName).sort()).toEqual(["PAYER ONE", "PAYER TWO"]);
    expect(await statuses(wrongAmount.transactionId)).toEqual(["REJECTED ORIGINAL_AMOUNT_MISMATCH"]);

    // Items kept before the bank entry id was: the same trace and amount fit twice.
    await db.updateTable("ach_bank_items").set({ detail: JSON.stringify({ secCode: "PPD", name: "OPERATOR", identificationNumber: "DEP-ABC" }) }).where("bank_file", "in", ["IN-1.ach", "IN-2.ach"]).execute();
    const ambiguous = await instruct({ ...ret, returnedCredit: rc({}) });
    expect(await statuses(ambiguous.transactionId)).toEqual(["REJECTED ORIGINAL_ENTRY_AMBIGUOUS"]);
  });
});
