import { describe, expect, it } from "vitest";
import { debianTool, skipWithout } from "../../../test/infra/debian-tool.js";
import {
  Iso20022Error,
  decimalFromMinorUnits,
  readNotification,
  readPaymentStatusReport,
  readStatement,
  writeCreditTransferFile,
  type SepaCreditTransferFile,
} from "../src/index.js";
import { readCreditTransferFile, writeNotification, writeStatement, writeStatusReport } from "./bank-simulator.js";
import { xsd, xsdErrors } from "./fixtures.js";
import { admit } from "../src/runtime/admission.js";
import type { RailInstruction } from "@corridor/connector";

// Our pain.001 against the official XSD (libxml2's xmllint) and read by the bank simulator (a W3C
// DOM, not our code); the bank's answers written by the simulator, checked against their
// XSDs, and read by our readers.

const xmllint = debianTool("xmllint", "libxml2-utils");
const skip = skipWithout(xmllint, "sepa-iso20022 XSD");

const file = (over: Partial<SepaCreditTransferFile> = {}): SepaCreditTransferFile => ({
  messageId: "CORR-20261127-0900-1",
  createdAt: new Date("2026-11-27T09:00:00.123Z"),
  initiatingParty: { name: "Corridor Operator GmbH", id: "DE98ZZZ09999999999" },
  paymentInfoId: "CORR-20261127-0900-1-P",
  debtor: { name: "Corridor Operator GmbH", iban: "DE89370400440532013000", bic: "COBADEFFXXX" },
  requestedExecutionDate: "2026-11-27",
  transfers: [
    { instructionId: "T-0001", endToEndId: "Transaction-0190aa01", amount: 1234n, creditor: { name: "Zoë Müller & Söhne", iban: "FR1420041010050500013M02606" }, remittance: "Invoice 42 — thank you" },
    { instructionId: "T-0002", endToEndId: "Transaction-0190aa02", amount: 99_999_999_999n, creditor: { name: "ACME B.V.", iban: "NL91ABNA0417164300", bic: "ABNANL2A" } },
    { instructionId: "T-0003", endToEndId: "Transaction-0190aa03", amount: 1n, creditor: { name: "Jane Doe", iban: "DE75512108001245126199" } },
  ],
  ...over,
});

describe.skipIf(skip)("pain.001.001.10: valid for the XSD and read by another implementation", () => {
  it("writes a file the official schema accepts", () => {
    expect(xsdErrors(xmllint.path!, writeCreditTransferFile(file()), xsd("pain.001.001.10_1.xsd"))).toBeNull();
    expect(xsdErrors(xmllint.path!, writeCreditTransferFile(file({ instant: true, transfers: file().transfers.slice(0, 1), debtor: { name: "Op", iban: "DE89370400440532013000" } })), xsd("pain.001.001.10_1.xsd"))).toBeNull();
  });

  it("a RETURN instruction (rail contract 1.3) is a credit transfer back to the debtor the camt entry named, remittance RETURN <end-to-end id / reference>; valid for the XSD and read by the bank", () => {
    const i: RailInstruction = {
      instructionId: "Event:1", occurredAt: new Date("2026-11-27T08:00:00Z"), platformId: "", environment: "PRODUCTION", connector: "sepa-iso20022",
      transactionId: "Transaction:0190aa04-0000-7000-8000-000000000004", direction: "PAYOUT", kind: "RETURN", amount: 4_321n, currency: "EUR", paymentRail: "SEPA",
      externalAccountId: "", accountInfo: {}, reference: "RETURN E2E-77 INVOICE 77", umaAddress: "",
      returnedCredit: { bankEntryId: "ASR-123", reason: "R23", paymentRail: "SEPA", senderName: "Jörg Payer", senderAccount: "DE75 5121 0800 1245 1261 99", senderRouting: "", reference: "E2E-77 INVOICE 77", creditedAccount: "DE89370400440532013000", creditedRouting: "", valueDate: "2026-11-26", suspenseItemId: "RailNotice:1" },
    };
    const a = admit(i);
    if (!a.ok) throw new Error(a.reason);
    expect(a).toMatchObject({ creditorIban: "DE75512108001245126199", creditorName: "Jorg Payer", remittance: "RETURN E2E-77 INVOICE 77", endToEndId: "0190aa04000070008000000000000004" });
    const xml = writeCreditTransferFile(file({ transfers: [{ instructionId: "T-0004", endToEndId: a.endToEndId, amount: i.amount, creditor: { name: a.creditorName, iban: a.creditorIban }, remittance: a.remittance }] }));
    expect(xsdErrors(xmllint.path!, xml, xsd("pain.001.001.10_1.xsd"))).toBeNull();
    expect(readCreditTransferFile(xml).transfers).toEqual([
      { instructionId: "T-0004", endToEndId: a.endToEndId, amount: "43.21", currency: "EUR", creditorName: "Jorg Payer", creditorIban: "DE75512108001245126199", creditorBic: undefined, remittance: "RETURN E2E-77 INVOICE 77" },
    ]);
    // What cannot be returned is refused: no IBAN or name of the sender, no returned credit, another currency.
    expect(admit({ ...i, returnedCredit: { ...i.returnedCredit!, senderAccount: "" } })).toEqual({ ok: false, reason: "SENDER_IBAN_UNKNOWN" });
    expect(admit({ ...i, returnedCredit: { ...i.returnedCredit!, senderName: "" } })).toEqual({ ok: false, reason: "SENDER_NAME_UNKNOWN" });
    expect(admit({ ...i, returnedCredit: undefined })).toEqual({ ok: false, reason: "RETURN_WITHOUT_CREDIT" });
    expect(admit({ ...i, currency: "USD" })).toEqual({ ok: false, reason: "CURRENCY_NOT_SUPPORTED" });
  });

  it("a file the schema refuses is caught by this check (the check can fail)", () => {
    const broken = writeCreditTransferFile(file()).replace("<ChrgBr>SLEV</ChrgBr>", "<ChrgBr>SLEV</ChrgBr><Bogus/>");
    expect(xsdErrors(xmllint.path!, broken, xsd("pain.001.001.10_1.xsd"))).toMatch(/Bogus/);
  });

  it("the bank reads every transfer with its amount, ids and creditor, and the totals agree", () => {
    const got = readCreditTransferFile(writeCreditTransferFile(file()));
    expect(got).toMatchObject({ messageId: "CORR-20261127-0900-1", numberOfTransactions: 3, paymentInfoId: "CORR-20261127-0900-1-P", debtorIban: "DE89370400440532013000", requestedExecutionDate: "2026-11-27", serviceLevel: "SEPA" });
    expect(got.controlSum).toBe("1000000012.34");
    expect(got.transfers).toEqual([
      { instructionId: "T-0001", endToEndId: "Transaction-0190aa01", amount: "12.34", currency: "EUR", creditorName: "Zoe Muller Sohne", creditorIban: "FR1420041010050500013M02606", creditorBic: undefined, remittance: "Invoice 42 thank you" },
      { instructionId: "T-0002", endToEndId: "Transaction-0190aa02", amount: "999999999.99", currency: "EUR", creditorName: "ACME B.V.", creditorIban: "NL91ABNA0417164300", creditorBic: "ABNANL2A", remittance: undefined },
      { instructionId: "T-0003", endToEndId: "Transaction-0190aa03", amount: "0.01", currency: "EUR", creditorName: "Jane Doe", creditorIban: "DE75512108001245126199", creditorBic: undefined, remittance: undefined },
    ]);
    expect(readCreditTransferFile(writeCreditTransferFile(file({ instant: true }))).localInstrument).toBe("INST");
  });

  it("refuses a file no bank would take: no transfers, duplicate end-to-end ids, amounts outside SEPA, bad IBAN or BIC, bad ids", () => {
    const t = file().transfers[0]!;
    for (const bad of [
      file({ transfers: [] }),
      file({ transfers: [t, { ...t, instructionId: "T-9" }] }),
      file({ transfers: [{ ...t, amount: 0n }] }),
      file({ transfers: [{ ...t, amount: 100_000_000_000n }] }),
      file({ transfers: [{ ...t, creditor: { ...t.creditor, iban: "not-an-iban" } }] }),
      file({ debtor: { name: "x", iban: "DE89370400440532013000", bic: "bad" } }),
      file({ messageId: "has space" }),
      file({ requestedExecutionDate: "27.11.2026" }),
    ]) {
      expect(() => writeCreditTransferFile(bad)).toThrow(Iso20022Error);
    }
  });
});

describe.skipIf(skip)("the bank's answers (pain.002 v11, camt.054 v08, camt.053 v08), schema-valid, read by our readers", () => {
  const sent = readCreditTransferFile(writeCreditTransferFile(file()));

  it("a status report: one settled, one rejected for a closed account (AC04), one accepted", () => {
    const xml = writeStatusReport({
      messageId: "BANK-STS-1",
      createdAt: "2026-11-27T10:00:00",
      original: sent,
      verdicts: [
        { instructionId: "T-0001", endToEndId: "Transaction-0190aa01", status: "ACSC" },
        { instructionId: "T-0002", endToEndId: "Transaction-0190aa02", status: "RJCT", reason: "AC04" },
        { instructionId: "T-0003", endToEndId: "Transaction-0190aa03", status: "ACCP" },
      ],
    });
    expect(xsdErrors(xmllint.path!, xml, xsd("pain.002.001.11.xsd"))).toBeNull();
    const report = readPaymentStatusReport(xml);
    expect(report).toMatchObject({ version: "11", originalMessageId: sent.messageId, originalMessageName: "pain.001.001.10" });
    expect(report.payments[0]!.transactions.map((t) => [t.originalEndToEndId, t.status, t.reasons[0]?.code])).toEqual([
      ["Transaction-0190aa01", "ACSC", undefined],
      ["Transaction-0190aa02", "RJCT", "AC04"],
      ["Transaction-0190aa03", "ACCP", undefined],
    ]);
  });

  it("a notification: our transfer booked, a credit received with its reference, a return with its reason", () => {
    const xml = writeNotification({
      messageId: "BANK-NTF-1",
      createdAt: "2026-11-28T06:00:00",
      iban: "DE89370400440532013000",
      entries: [
        { amount: "12.34", direction: "DBIT", bookingDate: "2026-11-27", accountServicerReference: "B1", family: "ICDT", subFamily: "ESCT", endToEndId: "Transaction-0190aa01", instructionId: "T-0001" },
        { amount: "250.00", direction: "CRDT", bookingDate: "2026-11-27", accountServicerReference: "B2", family: "RCDT", subFamily: "ESCT", debtor: { name: "Jane Doe", iban: "DE75512108001245126199" }, remittance: "CORR-REF-7Q2K" },
        { amount: "0.01", direction: "CRDT", bookingDate: "2026-11-28", accountServicerReference: "B3", family: "ICDT", subFamily: "RRTN", endToEndId: "Transaction-0190aa03", returnReason: "AC04" },
      ],
    });
    expect(xsdErrors(xmllint.path!, xml, xsd("camt.054.001.08.xsd"))).toBeNull();
    const [report] = readNotification(xml).reports;
    expect(report!.account.iban).toBe("DE89370400440532013000");
    expect(report!.entries.map((e) => [e.direction, e.amount, e.bankTransactionCode?.family, e.details[0]?.endToEndId])).toEqual([
      ["DEBIT", 1234n, "ICDT", "Transaction-0190aa01"],
      ["CREDIT", 25000n, "RCDT", "NOTPROVIDED"],
      ["CREDIT", 1n, "ICDT", "Transaction-0190aa03"],
    ]);
    expect(report!.entries[1]!.details[0]).toMatchObject({ debtor: { name: "Jane Doe", iban: "DE75512108001245126199" }, remittance: { unstructured: ["CORR-REF-7Q2K"] } });
    expect(report!.entries[2]!.details[0]!.returnReason).toEqual({ code: "AC04", proprietary: undefined, additionalInfo: [] });
  });

  it("a statement whose booked entries take the opening balance to the closing one", () => {
    const xml = writeStatement({
      messageId: "BANK-STM-1",
      createdAt: "2026-11-28T02:00:00",
      iban: "DE89370400440532013000",
      date: "2026-11-27",
      opening: decimalFromMinorUnits(100000n, "EUR"),
      closing: decimalFromMinorUnits(100000n - 1234n + 25000n, "EUR"),
      entries: [
        { amount: "12.34", direction: "DBIT", bookingDate: "2026-11-27", accountServicerReference: "B1", family: "ICDT", subFamily: "ESCT", endToEndId: "Transaction-0190aa01" },
        { amount: "250.00", direction: "CRDT", bookingDate: "2026-11-27", accountServicerReference: "B2", family: "RCDT", subFamily: "ESCT" },
      ],
    });
    expect(xsdErrors(xmllint.path!, xml, xsd("camt.053.001.08.xsd"))).toBeNull();
    const [report] = readStatement(xml).reports;
    const balance = (t: string) => report!.balances.find((b) => b.type === t)!.amount;
    const net = report!.entries.reduce((s, e) => s + (e.direction === "CREDIT" ? e.amount : -e.amount), 0n);
    expect([balance("OPBD"), net, balance("CLBD")]).toEqual([100000n, 23766n, 123766n]);
  });
});
