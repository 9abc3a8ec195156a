import { mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { RAIL_STATEMENTS_TOPIC, createOutcomePublisher, createStatementPublisher, decodeStatement, windowFor, type RailInstruction } from "@corridor/connector";
import { ManualClock, createLogger, newId, type DatabaseHandle } from "@corridor/kit";
import { openServiceTestDatabase } from "@corridor/kit/testing";
import type { Kysely } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { debianTool, skipWithout } from "../../../test/infra/debian-tool.js";
import { sftpServerRequired, sftpServerUnavailableReason, startSftpServer, type SftpTestServer } from "../../../test/infra/sftp/sshd.js";
import { SEPA_MIGRATIONS_DIR, SEPA_SCHEMA, directoryDrop, endToEndIdOf, sepaConfigSchema, sepaDropFromConfig, sepaWork, type BankFileDrop } from "../src/index.js";
import { sepaSchedule } from "../src/runtime/config.js";
import type { SepaTables } from "../src/runtime/tables.js";
import { writeStatusReport } from "./bank-simulator.js";
import { FIXTURES, xsd, xsdErrors } from "./fixtures.js";
import { testBank } from "./test-bank.js";

// The SEPA connector's own guarantees, against a real database and a directory drop: files per
// window, exactly one upload whatever crashes, the bank's answers applied once, nothing it sends lost.

const log = createLogger("sepa-test", "silent");
const xmllint = debianTool("xmllint", "libxml2-utils");
const FAIL_IBAN = "FR1420041010050500013M02606";
const RETURN_IBAN = "NL91ABNA0417164300";

let handle: DatabaseHandle;
let drop: () => Promise<void>;
beforeAll(async () => {
  ({ db: handle, drop } = await openServiceTestDatabase({ schema: SEPA_SCHEMA, migrationsDir: SEPA_MIGRATIONS_DIR }));
});
afterAll(async () => drop?.());
// One connector per test: what an earlier test left (a file that failed to upload) is not this one's.
beforeEach(async () => {
  for (const t of ["sepa_transfers", "sepa_files", "sepa_bank_documents", "sepa_received_credits", "connector_outcomes", "connector_instructions", "connector_statements"]) {
    await handle.root.withSchema(SEPA_SCHEMA).deleteFrom(t).execute();
  }
});

// Each test starts on a Monday of its own, so its windows (and file names) are its own in the shared schema.
let week = 0;
const monday = () => {
  let day = 5 + 7 * week++;
  // Easter Monday is a TARGET2 closing day: no window that day.
  if (new Date(Date.UTC(2026, 0, day)).toISOString().startsWith("2026-04-06")) day = 5 + 7 * week++;
  // 08:00 in Berlin: UTC+1, or UTC+2 in summer time (from 29 March 2026).
  const summer = Date.UTC(2026, 0, day) >= Date.UTC(2026, 2, 29) && Date.UTC(2026, 0, day) < Date.UTC(2026, 9, 25);
  return new Date(Date.UTC(2026, 0, day, summer ? 6 : 7, 0, 0));
};

/** The SFTP settings of the test server (the bank's folders as its session names them). */
const sftpEnv = (server: SftpTestServer, over: Record<string, string> = {}) => ({
  SEPA_SFTP_HOST: server.host,
  SEPA_SFTP_PORT: String(server.port),
  SEPA_SFTP_USERNAME: server.username,
  SEPA_SFTP_PRIVATE_KEY: server.privateKey,
  SEPA_SFTP_HOST_KEY: server.hostPublicKey,
  SEPA_SFTP_INBOX_DIR: server.remotePath("inbox"),
  SEPA_SFTP_OUTBOX_DIR: server.remotePath("outbox"),
  SEPA_SFTP_ARCHIVE_DIR: server.remotePath("archive"),
  SEPA_SFTP_TIMEOUT_MS: "10000",
  ...over,
});

function setup(over: { drop?: (d: BankFileDrop) => BankFileDrop; sftp?: { server: SftpTestServer; env?: Record<string, string> } } = {}) {
  const bank = testBank({ [FAIL_IBAN]: { reject: "AC04" }, [RETURN_IBAN]: { settleThenReturn: "MD07" } }, { root: over.sftp?.server.localRoot });
  for (const d of ["inbox", "outbox", "archive"]) mkdirSync(join(bank.root, d), { recursive: true });
  const start = monday();
  const clock = new ManualClock(start);
  const day = start.toISOString().slice(0, 10).replace(/-/g, "");
  const fileOf = (cutoff: string) => `CORRIDOR-SEPA-${day}T${cutoff}-1`;
  const db = handle.forSchema<SepaTables>(SEPA_SCHEMA);
  const config = sepaConfigSchema.parse({
    SEPA_DEBTOR_NAME: "Corridor Operator GmbH",
    SEPA_DEBTOR_IBAN: "DE89370400440532013000",
    ...(over.sftp ? sftpEnv(over.sftp.server, over.sftp.env) : { SEPA_FILE_DROP_DIR: bank.root }),
  });
  const fileDrop = (over.drop ?? ((d) => d))(over.sftp ? sepaDropFromConfig(config) : directoryDrop(bank.root));
  const work = sepaWork({ db, clock, log, config, drop: fileDrop, outcomes: createOutcomePublisher({ connector: "sepa", clock }), statements: createStatementPublisher({ connector: "sepa", clock }) });
  const platformId = newId("Platform");
  const instruction = (iban: string, amount = 1234n, over: Partial<RailInstruction> = {}): RailInstruction => ({
    instructionId: newId("Event"),
    occurredAt: clock.now(),
    platformId,
    environment: "PRODUCTION",
    connector: "sepa",
    transactionId: newId("Transaction"),
    direction: "PAYOUT",
    kind: "TRANSFER",
    amount,
    currency: "EUR",
    paymentRail: "SEPA",
    externalAccountId: newId("ExternalAccount"),
    accountInfo: { accountType: "EUR_ACCOUNT", iban, beneficiary: { beneficiaryType: "INDIVIDUAL", fullName: "Zoë Müller" } },
    reference: "CORR-REF-1",
    umaAddress: "",
    ...over,
  });
  const accept = (i: RailInstruction) => db.transaction().execute((trx) => work.accept(i, trx));
  const outcomes = async (transactionId: string) =>
    (await handle.root.withSchema(SEPA_SCHEMA).selectFrom("connector_outcomes").select(["status", "reason"]).where("transaction_id", "=", transactionId).orderBy("sequence").execute()).map((o) => (o.reason ? `${o.status}:${o.reason}` : o.status));
  return { bank, clock, db, work, instruction, accept, outcomes, fileOf };
}

const inbox = (root: string) => readdirSync(join(root, "inbox")).filter((f) => !f.startsWith("."));

describe("SEPA connector: windows, files, exactly-once upload", () => {
  it("puts transfers into the window of the next cut-off and files each window once its cut-off passes", async () => {
    const s = setup();
    const a = s.instruction("DE75512108001245126199");
    await s.accept(a); // 08:00 Berlin → the 09:00 window
    s.clock.advance(2 * 3600_000); // 10:00 → the 14:00 window
    const b = s.instruction("DE75512108001245126199", 500n);
    await s.accept(b);
    expect(await s.work.file()).toBe(1); // 09:00 has passed, 14:00 not yet
    expect(await s.work.upload()).toBe(1);
    expect(inbox(s.bank.root)).toEqual([`${s.fileOf("0900")}.xml`]);
    s.clock.advance(5 * 3600_000);
    expect(await s.work.file()).toBe(1);
    await s.work.upload();
    expect(inbox(s.bank.root).sort()).toEqual([`${s.fileOf("0900")}.xml`, `${s.fileOf("1400")}.xml`]);
    expect(await s.outcomes(a.transactionId)).toEqual(["PROCESSING"]);
    expect(await s.work.file()).toBe(0); // nothing left to file
  });

  it.skipIf(skipWithout(xmllint, "sepa-iso20022 XSD"))("uploads a file the official pain.001.001.10 schema accepts, with the transfer's end-to-end id", async () => {
    const s = setup();
    const i = s.instruction("DE75512108001245126199", 99_999_999_999n);
    await s.accept(i);
    s.clock.advance(3600_000);
    await s.work.file();
    await s.work.upload();
    const [name] = inbox(s.bank.root);
    const xml = readFileSync(join(s.bank.root, "inbox", name!), "utf8");
    expect(xsdErrors(xmllint.path!, xml, xsd("pain.001.001.10_1.xsd"))).toBeNull();
    expect(xml).toContain(`<EndToEndId>${endToEndIdOf(i.transactionId)}</EndToEndId>`);
    expect(xml).toContain("<Nm>Zoe Muller</Nm>");
  });

  it("after a crash between the upload and its record, the next pass records the file without sending it again", async () => {
    let uploads = 0;
    let crash = true;
    const s = setup({
      drop: (d) => ({
        ...d,
        async upload(name, content) {
          const result = await d.upload(name, content);
          if (result === "uploaded") uploads++;
          if (crash) throw new Error("process killed after the upload");
          return result;
        },
      }),
    });
    const i = s.instruction("DE75512108001245126199");
    await s.accept(i);
    s.clock.advance(3600_000);
    await s.work.file();
    await expect(s.work.upload()).rejects.toThrow("process killed");
    expect(await s.outcomes(i.transactionId)).toEqual([]);
    crash = false;
    await s.work.upload();
    expect(uploads).toBe(1);
    expect(await s.outcomes(i.transactionId)).toEqual(["PROCESSING"]);
    await s.work.upload();
    expect(uploads).toBe(1);
  });

  it("refuses to overwrite another file of the same name in the bank's inbox", async () => {
    const s = setup();
    await s.accept(s.instruction("DE75512108001245126199"));
    s.clock.advance(3600_000);
    await s.work.file();
    writeFileSync(join(s.bank.root, "inbox", `${s.fileOf("0900")}.xml`), "someone else's file");
    await expect(s.work.upload()).rejects.toThrow(/another file named/);
  });

  it("rejects at once what SEPA cannot carry: a pull, another currency, a bad IBAN, no name", async () => {
    const s = setup();
    const cases = [
      [s.instruction("DE75512108001245126199", 100n, { direction: "PULL" }), "REJECTED:SEPA_DIRECT_DEBIT_NOT_SUPPORTED"],
      [s.instruction("DE75512108001245126199", 100n, { currency: "USD" }), "REJECTED:CURRENCY_NOT_SUPPORTED"],
      [s.instruction("not-an-iban"), "REJECTED:INVALID_BANK_ACCOUNT"],
      [s.instruction("DE75512108001245126199", 100n, { accountInfo: { accountType: "EUR_ACCOUNT", iban: "DE75512108001245126199", beneficiary: { fullName: "日本" } } }), "REJECTED:MISSING_BENEFICIARY_NAME"],
    ] as const;
    for (const [i, outcome] of cases) {
      await s.accept(i);
      expect(await s.outcomes(i.transactionId)).toEqual([outcome]);
    }
    s.clock.advance(3600_000);
    expect(await s.work.file()).toBe(0);
  });
});

describe("SEPA connector: the bank's reports", () => {
  it("settles, rejects and returns as the bank says, each report once, and archives them", async () => {
    const s = setup();
    const ok = s.instruction("DE75512108001245126199");
    const bad = s.instruction(FAIL_IBAN);
    const back = s.instruction(RETURN_IBAN);
    for (const i of [ok, bad, back]) await s.accept(i);
    s.clock.advance(3600_000);
    await s.work.file();
    await s.work.upload();
    expect(s.bank.answer()).toBe(1);
    expect(await s.work.read()).toBe(2);
    expect(await s.outcomes(ok.transactionId)).toEqual(["PROCESSING", "COMPLETED"]);
    expect(await s.outcomes(bad.transactionId)).toEqual(["PROCESSING", "REJECTED:AC04"]);
    expect(await s.outcomes(back.transactionId)).toEqual(["PROCESSING", "COMPLETED", "RETURNED:MD07"]);
    expect(readdirSync(join(s.bank.root, "outbox"))).toEqual([]);
    expect(readdirSync(join(s.bank.root, "archive"))).toHaveLength(2);
    // The same report dropped again (the bank resends it) changes nothing.
    const again = readdirSync(join(s.bank.root, "archive"))[0]!;
    writeFileSync(join(s.bank.root, "outbox", again), readFileSync(join(s.bank.root, "archive", again)));
    expect(await s.work.read()).toBe(0);
    expect(await s.outcomes(ok.transactionId)).toEqual(["PROCESSING", "COMPLETED"]);
  });

  it("never treats the bank's duplicate-file rejection (DU01) as a rejection of the transfers; any other file rejection rejects them all", async () => {
    const s = setup();
    const a = s.instruction("DE75512108001245126199");
    const b = s.instruction("DE75512108001245126199", 77n);
    await s.accept(a);
    await s.accept(b);
    s.clock.advance(3600_000);
    await s.work.file();
    await s.work.upload();
    const original = { messageId: s.fileOf("0900"), numberOfTransactions: 2, controlSum: "13.11", paymentInfoId: "x", debtorIban: "", requestedExecutionDate: "", serviceLevel: "SEPA", transfers: [] };
    writeFileSync(join(s.bank.root, "outbox", "dup.xml"), writeStatusReport({ messageId: "B1", createdAt: "2026-01-05T09:00:00", original, groupStatus: "RJCT", groupReason: "DU01", verdicts: [] }));
    await s.work.read();
    expect(await s.outcomes(a.transactionId)).toEqual(["PROCESSING"]);
    writeFileSync(join(s.bank.root, "outbox", "rjct.xml"), writeStatusReport({ messageId: "B2", createdAt: "2026-01-05T09:00:00", original, groupStatus: "RJCT", groupReason: "AM10", verdicts: [] }));
    await s.work.read();
    expect(await s.outcomes(a.transactionId)).toEqual(["PROCESSING", "REJECTED:AM10"]);
    expect(await s.outcomes(b.transactionId)).toEqual(["PROCESSING", "REJECTED:AM10"]);
  });

  it.skipIf(skipWithout(xmllint, "sepa-iso20022 XSD"))("moves the file as the bank's pain.002 (schema-valid) says: accepted, then partly rejected (each rejection once); a report on a message not ours, or a real bank's report on its own file, changes nothing", async () => {
    const s = setup();
    const a = s.instruction("DE75512108001245126199");
    const b = s.instruction("DE75512108001245126199", 88n);
    await s.accept(a);
    await s.accept(b);
    s.clock.advance(3600_000);
    await s.work.file();
    await s.work.upload();
    const name = `${s.fileOf("0900")}.xml`;
    const state = async () => (await s.db.selectFrom("sepa_files").select(["state", "status_report", "status_reason"]).where("file_name", "=", name).executeTakeFirstOrThrow());
    const original = { messageId: s.fileOf("0900"), numberOfTransactions: 2, controlSum: "13.22", paymentInfoId: `${s.fileOf("0900")}-P`, debtorIban: "", requestedExecutionDate: "", serviceLevel: "SEPA", transfers: [] };
    const drop = (file: string, xml: string) => {
      expect(xsdErrors(xmllint.path!, xml, xsd("pain.002.001.11.xsd"))).toBeNull();
      writeFileSync(join(s.bank.root, "outbox", file), xml);
    };
    drop("1-actc.xml", writeStatusReport({ messageId: "B1", createdAt: "2026-01-05T09:00:00", original, groupStatus: "ACTC", verdicts: [] }));
    expect(await s.work.read()).toBe(1);
    expect(await state()).toEqual({ state: "ACCEPTED", status_report: "1-actc.xml", status_reason: null });
    expect(await s.outcomes(a.transactionId)).toEqual(["PROCESSING"]);

    const verdicts = [{ instructionId: endToEndIdOf(b.transactionId), endToEndId: endToEndIdOf(b.transactionId), status: "RJCT", reason: "AC01" }];
    drop("2-part.xml", writeStatusReport({ messageId: "B2", createdAt: "2026-01-05T10:00:00", original, groupStatus: "PART", verdicts }));
    drop("3-part-again.xml", writeStatusReport({ messageId: "B3", createdAt: "2026-01-05T10:05:00", original, groupStatus: "PART", verdicts }));
    expect(await s.work.read()).toBe(2);
    expect(await state()).toMatchObject({ state: "PARTIALLY_ACCEPTED", status_report: "2-part.xml" });
    expect(await s.outcomes(b.transactionId)).toEqual(["PROCESSING", "REJECTED:AC01"]);
    expect(await s.outcomes(a.transactionId)).toEqual(["PROCESSING"]);

    // Someone else's message, and PostFinance's real reports (on its own test files), touch nothing of ours.
    drop("4-other.xml", writeStatusReport({ messageId: "B4", createdAt: "2026-01-05T11:00:00", original: { ...original, messageId: "NOT-OURS" }, groupStatus: "RJCT", groupReason: "AM05", verdicts: [] }));
    for (const real of ["pain002-epo_p_0_0_0_2018032614401842.xml", "pain002-epo_p_ch5109000000250092291_1110097605_0_2018031511252307.xml"]) {
      writeFileSync(join(s.bank.root, "outbox", `5-${real}`), readFileSync(join(FIXTURES, "samples", real)));
    }
    expect(await s.work.read()).toBe(3);
    expect(await s.outcomes(a.transactionId)).toEqual(["PROCESSING"]);
    expect((await state()).state).toBe("PARTIALLY_ACCEPTED");
    expect(await s.db.selectFrom("sepa_bank_documents").select(["file_name", "message", "outcomes"]).where("file_name", "like", "5-%").orderBy("file_name").execute()).toEqual([
      { file_name: "5-pain002-epo_p_0_0_0_2018032614401842.xml", message: "pain.002", outcomes: 0 },
      { file_name: "5-pain002-epo_p_ch5109000000250092291_1110097605_0_2018031511252307.xml", message: "pain.002", outcomes: 0 },
    ]);
  });

  it("a file the bank rejects whole (pain.002 RJCT) is REJECTED with its reason", async () => {
    const s = setup();
    const a = s.instruction("DE75512108001245126199");
    await s.accept(a);
    s.clock.advance(3600_000);
    await s.work.file();
    await s.work.upload();
    const original = { messageId: s.fileOf("0900"), numberOfTransactions: 1, controlSum: "12.34", paymentInfoId: "x", debtorIban: "", requestedExecutionDate: "", serviceLevel: "SEPA", transfers: [] };
    writeFileSync(join(s.bank.root, "outbox", "dup.xml"), writeStatusReport({ messageId: "B1", createdAt: "2026-01-05T09:00:00", original, groupStatus: "RJCT", groupReason: "DU01", verdicts: [] }));
    await s.work.read();
    expect((await s.db.selectFrom("sepa_files").select("state").executeTakeFirstOrThrow()).state).toBe("UPLOADED");
    writeFileSync(join(s.bank.root, "outbox", "rjct.xml"), writeStatusReport({ messageId: "B2", createdAt: "2026-01-05T09:00:00", original, groupStatus: "RJCT", groupReason: "FF01", verdicts: [] }));
    await s.work.read();
    expect(await s.db.selectFrom("sepa_files").select(["state", "status_report", "status_reason"]).executeTakeFirstOrThrow()).toEqual({ state: "REJECTED", status_report: "rjct.xml", status_reason: "FF01" });
    expect(await s.outcomes(a.transactionId)).toEqual(["PROCESSING", "REJECTED:FF01"]);
  });

  it("reports each camt.053 statement once to the ledger, its entries marked with our transactions by end-to-end id", async () => {
    const s = setup();
    const a = s.instruction("DE75512108001245126199", 1234n, { reference: "TXN-ABCDEFGHJK" });
    const b = s.instruction(RETURN_IBAN, 500n);
    await s.accept(a);
    await s.accept(b);
    s.clock.advance(3600_000);
    await s.work.file();
    await s.work.upload();
    s.bank.answer("2026-01-06T08:00:00");
    await s.work.read();
    const name = s.bank.statement({ date: "2026-01-06" });
    expect(await s.work.read()).toBe(1);
    const rows = await handle.root.withSchema(SEPA_SCHEMA).selectFrom("outbox").select(["payload", "key"]).where("topic", "=", RAIL_STATEMENTS_TOPIC).execute();
    expect(rows).toHaveLength(1);
    const m = decodeStatement(rows[0]!.payload as Uint8Array);
    expect(m).toMatchObject({ connector: "sepa", environment: "PRODUCTION", account: "DE89370400440532013000", statementDate: "2026-01-06", timeZone: "Europe/Berlin", currency: "EUR", openingBooked: 100_000_000n, closingBooked: 100_000_000n - 1234n - 500n + 500n, sourceFile: name });
    expect(m.entries.map((e) => [e.direction, e.amount, e.transactionId, e.endToEndId, e.reference])).toEqual([
      ["DEBIT", 1234n, a.transactionId, endToEndIdOf(a.transactionId), "TXN-ABCDEFGHJK"],
      ["DEBIT", 500n, b.transactionId, endToEndIdOf(b.transactionId), ""],
      ["CREDIT", 500n, b.transactionId, endToEndIdOf(b.transactionId), ""],
    ]);
    // The same statement again (under another file name) is not reported twice.
    writeFileSync(join(s.bank.root, "outbox", `again-${name}`), readFileSync(join(s.bank.root, "archive", name)));
    expect(await s.work.read()).toBe(1);
    expect(await handle.root.withSchema(SEPA_SCHEMA).selectFrom("outbox").select("id").where("topic", "=", RAIL_STATEMENTS_TOPIC).execute()).toHaveLength(1);
  });

  it("archives a report it cannot read without crashing or retrying it forever, and keeps credits that are not ours", async () => {
    const s = setup();
    writeFileSync(join(s.bank.root, "outbox", "0-garbage.xml"), "<Document><broken");
    writeFileSync(join(s.bank.root, "outbox", "1-camt053.xml"), readFileSync(join(FIXTURES, "samples", "FI_camt_053_sample.xml.xml")));
    writeFileSync(
      join(s.bank.root, "outbox", "2-credit.xml"),
      readFileSync(join(FIXTURES, "samples", "200519_camt054-chdd_p_ch2909000000250094239_1110097484_0_20190520700381159.xml")),
    );
    expect(await s.work.read()).toBe(3);
    const docs = await s.db.selectFrom("sepa_bank_documents").select(["file_name", "message"]).where("file_name", "in", ["0-garbage.xml", "1-camt053.xml", "2-credit.xml"]).orderBy("file_name").execute();
    expect(docs.map((d) => d.message)).toEqual(["unreadable", "camt.053", "camt.054"]);
    const credits = await s.db.selectFrom("sepa_received_credits").select(["amount", "currency", "debtor_iban", "reference"]).where("document", "=", "2-credit.xml").orderBy("amount").execute();
    expect(credits).toEqual([
      { amount: 150n, currency: "CHF", debtor_iban: "CH5109000000250092291", reference: "Rechnung 1001" },
      { amount: 300n, currency: "CHF", debtor_iban: "CH5109000000250092291", reference: "Rechnung 1002" },
    ]);
    expect(await s.work.read()).toBe(0);
  });
});

const unavailable = sftpServerUnavailableReason();

describe.skipIf(unavailable !== null && !sftpServerRequired)(`SEPA connector over the bank's SFTP server (OpenSSH's sshd)${unavailable ? ` — ${sftpServerRequired ? "cannot run" : "skipped"}: ${unavailable}` : ""}`, () => {
  let server: SftpTestServer;
  beforeAll(async () => {
    server = await startSftpServer();
  });
  afterAll(async () => server?.stop());

  it("uploads each window's file once whatever crashes, and applies and archives the bank's reports read over SFTP", async () => {
    let uploads = 0;
    let crash = true;
    const s = setup({
      sftp: { server },
      drop: (d) => ({
        upload: async (name, content) => {
          const result = await d.upload(name, content);
          if (result === "uploaded") uploads++;
          if (crash) throw new Error("process killed after the upload");
          return result;
        },
        listInbox: () => d.listInbox(),
        listOutbox: () => d.listOutbox(),
        download: (name) => d.download(name),
        archive: (name) => d.archive(name),
      }),
    });
    const ok = s.instruction("DE75512108001245126199");
    const bad = s.instruction(FAIL_IBAN);
    const back = s.instruction(RETURN_IBAN);
    for (const i of [ok, bad, back]) await s.accept(i);
    s.clock.advance(3600_000);
    expect(await s.work.file()).toBe(1);
    await expect(s.work.upload()).rejects.toThrow("process killed");
    expect(await s.outcomes(ok.transactionId)).toEqual([]);
    crash = false;
    await s.work.upload(); // the restarted pass finds the same bytes in the bank's inbox: recorded, not sent
    await s.work.upload();
    expect(uploads).toBe(1);
    expect(inbox(server.localRoot)).toContain(`${s.fileOf("0900")}.xml`);
    expect(readdirSync(join(server.localRoot, "inbox")).filter((f) => f.endsWith(".part"))).toEqual([]);
    expect(await s.outcomes(ok.transactionId)).toEqual(["PROCESSING"]);

    expect(s.bank.answer()).toBe(1);
    expect(s.bank.received.map((f) => f.transfers.length)).toEqual([3]);
    expect(await s.work.read()).toBe(2);
    expect(await s.outcomes(ok.transactionId)).toEqual(["PROCESSING", "COMPLETED"]);
    expect(await s.outcomes(bad.transactionId)).toEqual(["PROCESSING", "REJECTED:AC04"]);
    expect(await s.outcomes(back.transactionId)).toEqual(["PROCESSING", "COMPLETED", "RETURNED:MD07"]);
    expect(readdirSync(join(server.localRoot, "outbox"))).toEqual([]);
    expect(await s.work.read()).toBe(0);
  });

  it("refuses a server whose host key is not the pinned SEPA_SFTP_HOST_KEY: nothing is sent or recorded", async () => {
    const other = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBl4f3o4b0r3Cc0mWqJ8n2yU2rS7Vx3tq9y1Jm0QxqZ1 someone-else";
    const s = setup({ sftp: { server, env: { SEPA_SFTP_HOST_KEY: other } } });
    const i = s.instruction("DE75512108001245126199");
    await s.accept(i);
    s.clock.advance(3600_000);
    await s.work.file();
    await expect(s.work.upload()).rejects.toThrow(/not the pinned SEPA_SFTP_HOST_KEY/);
    expect(inbox(server.localRoot)).not.toContain(`${s.fileOf("0900")}.xml`);
    expect(await s.outcomes(i.transactionId)).toEqual([]);
  });
});

describe("SEPA settings: the bank's file drop", () => {
  const base = { SEPA_DEBTOR_NAME: "Corridor Operator GmbH", SEPA_DEBTOR_IBAN: "DE89370400440532013000" };
  it("takes a directory or an SFTP server, exactly one, and an SFTP server with a user, a pinned host key and a credential", () => {
    const issues = (env: Record<string, string>) => {
      const r = sepaConfigSchema.safeParse({ ...base, ...env });
      return r.success ? [] : r.error.issues.map((i) => i.path.join("."));
    };
    expect(issues({ SEPA_FILE_DROP_DIR: "/srv/bank" })).toEqual([]);
    expect(issues({})).toEqual(["SEPA_SFTP_HOST"]);
    expect(issues({ SEPA_FILE_DROP_DIR: "/srv/bank", SEPA_SFTP_HOST: "bank.example" })).toEqual(["SEPA_SFTP_HOST"]);
    expect(issues({ SEPA_SFTP_HOST: "bank.example" }).sort()).toEqual(["SEPA_SFTP_HOST_KEY", "SEPA_SFTP_PASSWORD", "SEPA_SFTP_USERNAME"]);
    expect(issues({ SEPA_SFTP_HOST: "bank.example", SEPA_SFTP_USERNAME: "corridor", SEPA_SFTP_HOST_KEY: "SHA256:abc", SEPA_SFTP_PASSWORD: "pw" })).toEqual([]);
  });

  it("has no window on TARGET2's closing days (Good Friday, Easter Monday) unless SEPA_CALENDAR=NONE", () => {
    const thursdayAfternoon = new Date("2026-04-02T13:00:00Z"); // 15:00 in Berlin, after the 14:00 cut-off
    const t2 = sepaSchedule(sepaConfigSchema.parse({ ...base, SEPA_FILE_DROP_DIR: "/srv/bank" }));
    expect(windowFor(t2, thursdayAfternoon).id).toBe("2026-04-07T0900");
    const none = sepaSchedule(sepaConfigSchema.parse({ ...base, SEPA_FILE_DROP_DIR: "/srv/bank", SEPA_CALENDAR: "NONE" }));
    expect(windowFor(none, thursdayAfternoon).id).toBe("2026-04-03T0900");
  });
});

export type { Kysely };
