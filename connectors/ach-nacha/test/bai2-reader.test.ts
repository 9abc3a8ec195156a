import { describe, expect, it } from "vitest";
import { Bai2FormatError, readBai2 } from "../src/bai2/reader.js";
import { bai2Statements } from "../src/bai2/statements.js";
import { writeBankBai2, type BankBai2File } from "./bank/bai2-writer.js";

// BAI2 end-of-day statements (docs/connectors.md, "BAI2"). No bank's BAI2 file is in the shared
// fixtures, so the reader is checked against statements the test bank writes with its own code
// (test/bank/bai2-writer.ts), against files written out here by hand record by record, and against
// every trailer fault it must refuse.

const day: BankBai2File = {
  sender: "021000021",
  receiver: "CORRIDOR",
  fileId: "20260106A",
  asOf: "2026-01-06",
  createdAt: new Date("2026-01-07T06:30:00Z"),
  accounts: [
    {
      accountNumber: "9876543210",
      openingLedger: 1_000_000n,
      closingLedger: 1_000_000n + 5_000n - 1_200n - 700n,
      details: [
        { typeCode: "165", cents: 5_000n, bankReference: "B0001", customerReference: "021000020000001", text: "ACH CREDIT TXN-AB12CD34EF, PPD" },
        { typeCode: "455", cents: 1_200n, bankReference: "B0002", customerReference: "021000020000002", text: "ACH DEBIT PAYOUT" },
        { typeCode: "455", cents: 700n, bankReference: "B0003", customerReference: "TXN-ZZ99YY88XX", text: "ACH DEBIT / WITH SLASH, AND COMMA", valueDate: "260107" },
      ],
    },
  ],
};

describe("BAI2 reader", () => {
  it("reads the test bank's statement: header, group, the account's opening and closing ledger, every detail with its references and text", () => {
    const f = readBai2(writeBankBai2(day));
    expect(f).toMatchObject({ sender: "021000021", receiver: "CORRIDOR", fileId: "20260106A", creationDate: "2026-01-07", creationTime: "0630" });
    const [g] = f.groups;
    expect(g).toMatchObject({ status: "1", asOfDate: "2026-01-06", currency: "USD", asOfDateModifier: "2" });
    const [a] = g!.accounts;
    expect(a!.accountNumber).toBe("9876543210");
    expect(a!.summaries.map((s) => [s.typeCode, s.amount, s.itemCount])).toEqual([
      ["010", 1_000_000n, undefined],
      ["015", 1_003_100n, undefined],
      ["100", 5_000n, 1],
      ["400", 1_900n, 2],
    ]);
    expect(a!.transactions.map((t) => [t.typeCode, t.direction, t.amount, t.bankReference, t.customerReference, t.text, t.valueDate])).toEqual([
      ["165", "CREDIT", 5_000n, "B0001", "021000020000001", "ACH CREDIT TXN-AB12CD34EF, PPD", undefined],
      ["455", "DEBIT", 1_200n, "B0002", "021000020000002", "ACH DEBIT PAYOUT", undefined],
      ["455", "DEBIT", 700n, "B0003", "TXN-ZZ99YY88XX", "ACH DEBIT / WITH SLASH, AND COMMA", "2026-01-07"],
    ]);
  });

  it("joins 88 continuations (a bank's 80-column lines) into their records, and counts them in the trailers", () => {
    const text = writeBankBai2({ ...day, wrapAt: 40 });
    expect(text.split("\n").filter((l) => l.startsWith("88,")).length).toBeGreaterThan(2);
    // The same reading, but for the line numbers records start on.
    const withoutLines = (t: string) => JSON.parse(JSON.stringify(readBai2(t), (k, v) => (k === "line" ? undefined : typeof v === "bigint" ? v.toString() : v)));
    expect(withoutLines(text)).toEqual(withoutLines(writeBankBai2(day)));
  });

  it("reads a file written out by hand: CRLF, funds types S and D, an empty text, a blank currency taken from the group", () => {
    const lines = [
      "01,BANKID,CUSTID,260106,0500,F1,80,,2/",
      "02,CUSTID,BANKID,1,260105,,USD,4/",
      "03,111222333,,010,-2500,,,015,+7500,,/",
      "16,175,6000,S,1000,2000,3000,REF1,,/",
      "16,475,1000,D,2,0,600,1,400,REF2,CUST2,CHECK 1001",
      "16,195,5000,Z,REF3,021000020000017,",
      "49,17000,5/",
      "98,17000,1,7/",
      "99,17000,1,9/",
    ];
    const f = readBai2(lines.join("\r\n"));
    const a = f.groups[0]!.accounts[0]!;
    expect(a.currency).toBe("USD");
    expect(a.summaries.map((s) => s.amount)).toEqual([-2500n, 7500n]);
    expect(a.transactions.map((t) => [t.direction, t.amount, t.fundsType, t.bankReference, t.customerReference, t.text])).toEqual([
      ["CREDIT", 6000n, "S", "REF1", "", ""],
      ["DEBIT", 1000n, "D", "REF2", "CUST2", "CHECK 1001"],
      ["CREDIT", 5000n, "Z", "REF3", "021000020000017", ""],
    ]);
    const { statements } = bai2Statements(f, { sourceFile: "x", timeZone: "America/New_York" });
    expect(statements[0]).toMatchObject({ openingBooked: -2500n, closingBooked: 7500n, statementDate: "2026-01-05" });
    expect(statements[0]!.entries.map((e) => e.traceNumber)).toEqual([undefined, undefined, "021000020000017"]);
  });

  const refused: [string, (r: string[][]) => void, RegExp][] = [
    ["an account control total that disagrees", (r) => (r.find((x) => x[0] === "49")![1] = "1"), /account 9876543210: control total 1 but its records add up to/],
    ["an account record count that disagrees", (r) => (r.find((x) => x[0] === "49")![2] = "9"), /trailer counts 9 records, the account has 5/],
    ["a group control total that disagrees", (r) => (r.find((x) => x[0] === "98")![1] = "0"), /group control total 0/],
    ["a group account count that disagrees", (r) => (r.find((x) => x[0] === "98")![2] = "2"), /counts 2 accounts, the group has 1/],
    ["a file control total that disagrees", (r) => (r.find((x) => x[0] === "99")![1] = "5"), /file control total 5/],
    ["a file record count that disagrees", (r) => (r.find((x) => x[0] === "99")![3] = "3"), /counts 3 records, the file has 9/],
    ["an amount with a decimal point", (r) => (r.find((x) => x[0] === "16")![2] = "12.00"), /transaction amount "12.00" is not an unsigned whole number/],
    ["an unknown detail type code", (r) => (r.find((x) => x[0] === "16")![1] = "701"), /type code 701 is neither a credit/],
    ["a funds type that does not exist", (r) => (r.find((x) => x[0] === "16")![3] = "Q"), /funds type "Q"/],
  ];
  for (const [what, tamper, message] of refused) {
    it(`refuses ${what}, naming the line`, () => {
      expect(() => readBai2(writeBankBai2({ ...day, tamper }))).toThrow(message);
      expect(() => readBai2(writeBankBai2({ ...day, tamper }))).toThrow(/^line \d+: /);
    });
  }

  it("refuses files out of order, cut short, of another version, or with bytes that are not ASCII", () => {
    const good = writeBankBai2(day).trimEnd().split("\n");
    const bad = (lines: string[]) => () => readBai2(lines.join("\n"));
    expect(bad(good.slice(0, -1))).toThrow(/ends without its trailer \(99\)/);
    expect(bad([...good, good[1]!])).toThrow(/after the file trailer/);
    expect(bad(good.filter((l) => !l.startsWith("49")))).toThrow(/while account 9876543210 is open/);
    expect(bad(good.filter((l) => !l.startsWith("01")))).toThrow(/before the file header/);
    expect(bad([good[0]!.replace(/,2\/$/, ",3/"), ...good.slice(1)])).toThrow(/not BAI version 2/);
    expect(bad([good[0]!, good[1]!.replace("USD", "US€"), ...good.slice(2)])).toThrow(/not printable ASCII/);
    expect(bad(["88,continued/", ...good])).toThrow(/continuation \(88\) with no record/);
    expect(bad(["101 094000019 0210000211703290000A094101US BANK"])).toThrow(/not a BAI2 record/);
    expect(() => readBai2("")).toThrow(Bai2FormatError);
  });
});

describe("BAI2 statements for reconciliation", () => {
  it("one statement per account of a final group: 010/015 as booked balances, every detail an entry with its trace or TXN reference", () => {
    const { statements, skipped } = bai2Statements(readBai2(writeBankBai2(day)), { sourceFile: "stmt.bai", timeZone: "America/New_York" });
    expect(skipped).toEqual([]);
    expect(statements).toHaveLength(1);
    const s = statements[0]!;
    expect(s).toMatchObject({ account: "9876543210", statementId: "021000021:20260106A:2026-01-07:2026-01-06:9876543210", statementDate: "2026-01-06", currency: "USD", openingBooked: 1_000_000n, closingBooked: 1_003_100n, timeZone: "America/New_York" });
    expect(s.entries.map((e) => [e.bankEntryId, e.direction, e.amount, e.traceNumber, e.reference, e.valueDate])).toEqual([
      ["B0001", "CREDIT", 5_000n, "021000020000001", "TXN-AB12CD34EF", "2026-01-06"],
      ["B0002", "DEBIT", 1_200n, "021000020000002", undefined, "2026-01-06"],
      ["B0003", "DEBIT", 700n, undefined, "TXN-ZZ99YY88XX", "2026-01-07"],
    ]);
    expect(s.openingBooked + s.entries.reduce((n, e) => n + (e.direction === "CREDIT" ? e.amount : -e.amount), 0n)).toBe(s.closingBooked);
  });

  it("skips interim and test groups: they are not the day's statement", () => {
    expect(bai2Statements(readBai2(writeBankBai2({ ...day, modifier: "3" })), { sourceFile: "x", timeZone: "UTC" })).toMatchObject({ statements: [], skipped: [expect.stringContaining("interim")] });
    expect(bai2Statements(readBai2(writeBankBai2({ ...day, groupStatus: "4" })), { sourceFile: "x", timeZone: "UTC" })).toMatchObject({ statements: [], skipped: [expect.stringContaining("test only")] });
  });
});
