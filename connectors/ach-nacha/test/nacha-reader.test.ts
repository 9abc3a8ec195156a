import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { NachaFormatError, parseNachaFile, readNacha, RETURN_CODES, type ParsedNachaFile } from "../src/nacha/index.js";
import { achFixture } from "./fixtures.js";

const read = (dir: string, name: string, opts = {}) => parseNachaFile(readFileSync(achFixture(dir, name)), opts);
const entries = (f: ParsedNachaFile) => f.batches.flatMap((b) => b.entries);

describe("NACHA reader: files banks send (fixtures ach/valid)", () => {
  it("reads every file in ach/valid", async () => {
    const names = readdirSync(achFixture("valid"));
    expect(names.length).toBeGreaterThanOrEqual(7);
    for (const name of names) {
      const f = await read("valid", name);
      expect(f.control.entryAddendaCount, name).toBeGreaterThan(0);
    }
  });

  it("ppd-debit: one PPD debit of $1,000,000.00 to 231380104, trace 121042880000001", async () => {
    const f = await read("valid", "ppd-debit.ach");
    expect(f.header).toMatchObject({ immediateDestination: "231380104", immediateOrigin: "0121042882", creationDate: "190624", fileIdModifier: "A" });
    expect(f.batches).toHaveLength(1);
    expect(f.batches[0]!.header).toMatchObject({ secCode: "PPD", serviceClassCode: "225", companyIdentification: "121042882", effectiveEntryDate: "190625", odfiIdentification: "12104288" });
    expect(entries(f)).toEqual([
      expect.objectContaining({ transactionCode: "27", routingNumber: "231380104", accountNumber: "12345678", amount: 100_000_000n, name: "Receiver Account Name", traceNumber: "121042880000001" }),
    ]);
    expect(f.control).toMatchObject({ totalDebit: 100_000_000n, totalCredit: 0n, entryHash: "0023138010", blockCount: 1, warnings: [] });
  });

  it("ccd-debit: two CCD debits, $5,000.00 and $1.25, to one business account", async () => {
    const f = await read("valid", "ccd-debit.ach");
    expect(f.batches[0]!.header.secCode).toBe("CCD");
    expect(entries(f).map((e) => [e.accountNumber, e.amount, e.identificationNumber, e.name, e.traceNumber])).toEqual([
      ["744-5678-99", 500_000n, "location1234567", "Best Co. #123456789012", "031300010000001"],
      ["744-5678-99", 125n, "Fee123456789012", "Best Co. #123456789012", "031300010000002"],
    ]);
    expect(f.control.totalDebit).toBe(500_125n);
  });

  it("ppd-mixedDebitCredit: a $2,000,000.00 debit balanced by two $1,000,000.00 credits", async () => {
    const f = await read("valid", "ppd-mixedDebitCredit.ach");
    expect(entries(f).map((e) => [e.transaction.direction, e.amount])).toEqual([["debit", 200_000_000n], ["credit", 100_000_000n], ["credit", 100_000_000n]]);
    expect(f.control).toMatchObject({ totalDebit: 200_000_000n, totalCredit: 200_000_000n });
  });

  it("ctx-debit: the CTX entry's two addenda records are its payment-related information", async () => {
    const f = await read("valid", "ctx-debit.ach");
    const [e] = entries(f);
    expect(e!.paymentRelatedInformation).toEqual(["Debit First Account", "Debit Second Account"]);
    expect(e!.amount).toBe(100_000_000n);
  });

  it("two-micro-deposits: savings credits of 44 and 32 cents and the balancing 76-cent debit, with their addenda", async () => {
    const f = await read("valid", "two-micro-deposits.ach");
    const first = f.batches[0]!.entries;
    expect(first.map((e) => [e.transactionCode, e.transaction.accountType, e.amount, e.traceNumber])).toEqual([
      ["32", "SAVINGS", 44n, "121042886829038"],
      ["32", "SAVINGS", 32n, "121042886829039"],
      ["27", "CHECKING", 76n, "121042886829040"],
    ]);
    expect(first[0]!.paymentRelatedInformation).toEqual(["paygate transaction"]);
    expect(f.control).toMatchObject({ batchCount: 2, totalDebit: 120n, totalCredit: 120n });
  });

  it("web-debit: three batches (WEB, WEB, PPD) totalling $260.20 of credits and $150.00 of debits", async () => {
    const f = await read("valid", "web-debit.ach");
    expect(f.batches.map((b) => b.header.secCode)).toEqual(["WEB", "WEB", "PPD"]);
    expect(entries(f).find((e) => e.name === "Luke Skywalker")).toMatchObject({ amount: 17_500n, traceNumber: "081000030000004" });
    expect(f.control).toMatchObject({ totalCredit: 26_820n, totalDebit: 15_000n });
  });

  it("20110805A (a bank's file with IAT batches): 83 entry and addenda records; the IAT receiver's name comes from addenda 10; its wrong batch count is a warning, not a refusal", async () => {
    const f = await read("valid", "20110805A.ach");
    expect(f.batches.map((b) => [b.header.secCode, b.header.batchNumber])).toEqual([["PPD", 1], ["PPD", 3], ["IAT", 4], ["IAT", 5]]);
    const iat = f.batches[2]!.entries;
    expect(iat.map((e) => [e.name, e.amount, e.accountNumber, e.traceNumber])).toEqual([
      ["HAYDEN BANKS", 109_000n, "998412345", "042000010000001"],
      ["HAYDEN BANKS", 109_000n, "998412345", "042000010000002"],
      ["MADISON ROSS", 273_000n, "998412345", "042000010000003"],
    ]);
    expect(f.control).toMatchObject({ entryAddendaCount: 83, totalDebit: 5_101_000n, totalCredit: 200n });
    expect(f.control.warnings).toEqual(["file control batch count 5 but the file has 4 batches"]);
  });
});

describe("NACHA reader: returns and notifications of change (fixtures ach/returns)", () => {
  it("reads every file in ach/returns (with the custom return code R97 allowed for the file that uses it)", async () => {
    for (const name of readdirSync(achFixture("returns"))) {
      await read("returns", name, { customReturnCodes: ["R97"] });
    }
  });

  it("return-WEB: an R01 (insufficient funds) of $123.54 and an R03 (no account) of $45.65, with the original trace numbers", async () => {
    const f = await read("returns", "return-WEB.ach");
    const rs = entries(f).map((e) => ({ code: e.return!.code, reason: e.return!.info!.reason, amount: e.amount, original: e.return!.originalTraceNumber, rdfi: e.return!.originalRdfi, name: e.name }));
    expect(rs).toEqual([
      { code: "R01", reason: "INSUFFICIENT_FUNDS", amount: 12_354n, original: "091400600000001", rdfi: "09100001", name: "Paul Jones" },
      { code: "R03", reason: "ACCOUNT_NOT_FOUND", amount: 4_565n, original: "091400600000003", rdfi: "02100002", name: "Bob Marley" },
    ]);
    expect(entries(f).map((e) => e.transactionCode)).toEqual(["26", "21"]);
  });

  it("return-PPD-custom-reason-code: R97 is refused unless the operator lists it as the bank's custom code", async () => {
    await expect(read("returns", "return-PPD-custom-reason-code.ach")).rejects.toThrow(/return reason code "R97" is not a NACHA R-code/);
    const f = await read("returns", "return-PPD-custom-reason-code.ach", { customReturnCodes: ["R97"] });
    const [e] = entries(f);
    expect(e!.return).toMatchObject({ code: "R97", info: undefined, originalTraceNumber: "092221172022300", originalRdfi: "12330515" });
    expect(e!.amount).toBe(106_161n);
  });

  it("dishonored-return: two R68 (untimely return) dishonors with the return's trace number and reason", async () => {
    const f = await read("returns", "dishonored-return.ach");
    expect(entries(f).map((e) => [e.amount, e.return!.code, e.return!.info!.kind, e.return!.dishonored, e.return!.addendaInformation])).toEqual([
      [25_000n, "R68", "dishonored", { returnTraceNumber: "123918710000001", returnSettlementDate: "179", returnReasonCode: "01" }, "Untimely Return"],
      [23_000n, "R68", "dishonored", { returnTraceNumber: "123918710000001", returnSettlementDate: "179", returnReasonCode: "01" }, "Untimely Return"],
    ]);
  });

  it("cor-read and cor-example: a C01 notification of change correcting the account number to 1918171614", async () => {
    for (const name of ["cor-read.ach", "cor-example.ach"]) {
      const f = await read("returns", name);
      expect(f.batches[0]!.header.secCode).toBe("COR");
      const [e] = entries(f);
      expect(e!.amount).toBe(0n);
      expect(e!.change).toMatchObject({
        code: "C01",
        refused: false,
        originalTraceNumber: "121042880000001",
        originalRdfi: "12104288",
        corrections: { accountNumber: "1918171614" },
        traceNumber: "091012980000088",
      });
      expect(e!.accountNumber).toBe("744-5678-99");
    }
  });

  it("FISERV zero file: a processor's file with no batches (CRLF line ends) reads as empty", async () => {
    const f = await read("returns", "FISERV-ZEROFILE-PIMRET825324_032720_110221.ach");
    expect(f.batches).toEqual([]);
    expect(f.header).toMatchObject({ immediateDestination: "100067554", immediateOriginName: "FISERV", creationDate: "200327" });
    expect(f.control).toMatchObject({ entryAddendaCount: 0, totalDebit: 0n, totalCredit: 0n });
  });

  it("every R-code the connector must handle maps to a failure reason", () => {
    expect(Object.fromEntries(["R01", "R02", "R03", "R04", "R10", "R29"].map((c) => [c, RETURN_CODES[c]!.reason]))).toEqual({
      R01: "INSUFFICIENT_FUNDS", R02: "ACCOUNT_CLOSED", R03: "ACCOUNT_NOT_FOUND", R04: "INVALID_ACCOUNT_NUMBER", R10: "NOT_AUTHORIZED", R29: "NOT_AUTHORIZED",
    });
  });
});

describe("NACHA reader: files it must refuse (fixtures ach/invalid)", () => {
  const expected: Record<string, RegExp> = {
    "crasher-0.ach": /line 1 \(batch header\): comes before the file header/,
    "crasher-1.ach": /line 1 \(batch header\): comes before the file header/,
    "crasher-2.ach": /line 1 \(batch header\): comes before the file header/,
    "crasher-3.ach": /line 1 \(batch header\): comes before the file header/,
    "crasher-4.ach": /byte 0x1e is not printable ASCII/,
    "crasher-5.ach": /byte 0xef is not printable ASCII/,
    "long-line.ach": /line 3 \(entry detail\): is 98 characters long; a NACHA record is 94/,
    "short-line.ach": /line 5 \(file control\): is 74 characters long/,
    "nonascii.ach": /line 3 \(file\): byte 0xa6 is not printable ASCII/,
    "pos-invalidReturnFile.ach": /line 4 \(addenda\): return reason code "R96"/,
    "ppd-debit-invalid-entryDetail-checkDigit.ach": /line 3 \(entry detail\): check digit 5 is wrong for receiving DFI 23138010 \(expected 4\)/,
    "return-no-batch-controls.ach": /line 1 \(batch header\): comes before the file header/,
    "return-no-batch-header.ach": /line 1 \(entry detail\): is outside a batch/,
    "return-no-file-header-control.ach": /line 1 \(batch header\): comes before the file header/,
    "web-invalidNOCFile.ach": /line 4 \(addenda\): change code "C92" is not a NACHA C-code/,
  };

  it("refuses every file in ach/invalid with a NachaFormatError naming the line and the fault", async () => {
    const names = readdirSync(achFixture("invalid")).sort();
    expect(names).toEqual(Object.keys(expected).sort());
    for (const name of names) {
      const err = await read("invalid", name).then(() => undefined, (e: unknown) => e);
      expect(err, name).toBeInstanceOf(NachaFormatError);
      expect((err as Error).message, name).toMatch(expected[name]!);
    }
  });
});

describe("NACHA reader: structure checks", () => {
  const valid = () => readFileSync(achFixture("valid", "ppd-debit.ach"), "latin1").split("\n");

  it("refuses a file whose batch control total disagrees with its entries", async () => {
    const lines = valid();
    lines[3] = lines[3]!.slice(0, 20) + "000100000001" + lines[3]!.slice(32);
    await expect(parseNachaFile(lines.join("\n"))).rejects.toThrow(/line 4 \(batch control\): total debit 100000001 but the debit entries sum to 100000000/);
  });

  it("refuses a file whose entry hash disagrees", async () => {
    const lines = valid();
    lines[4] = lines[4]!.slice(0, 21) + "0023138011" + lines[4]!.slice(31);
    await expect(parseNachaFile(lines.join("\n"))).rejects.toThrow(/file control\): entry hash 0023138011/);
  });

  it("refuses a file that stops before its file control", async () => {
    const lines = valid().slice(0, 4);
    await expect(parseNachaFile(lines.join("\n"))).rejects.toThrow(/ends without a file control record/);
  });

  it("refuses records after the file control other than 9-filled ones", async () => {
    const lines = valid();
    lines[6] = lines[1]!;
    await expect(parseNachaFile(lines.join("\n"))).rejects.toThrow(/line 7 \(batch header\): appears after the file control record/);
  });

  it("reads a file sent without line breaks (consecutive 94-character records) the same as with them", async () => {
    const text = readFileSync(achFixture("valid", "ccd-debit.ach"), "latin1");
    const blocked = text.split("\n").filter((l) => l.length > 0).map((l) => l.padEnd(94, " ")).join("");
    const a = await parseNachaFile(text);
    const b = await parseNachaFile(blocked);
    expect(b.batches[0]!.entries.map((e) => e.traceNumber)).toEqual(a.batches[0]!.entries.map((e) => e.traceNumber));
  });

  it("streams: a record split across chunks at every byte reads the same", async () => {
    const bytes = readFileSync(achFixture("returns", "return-WEB.ach"));
    async function* oneByte() {
      for (let i = 0; i < bytes.length; i++) yield bytes.subarray(i, i + 1);
    }
    const traces: string[] = [];
    for await (const ev of readNacha(oneByte())) if (ev.type === "entry") traces.push(ev.entry.traceNumber);
    expect(traces).toEqual(["091000017611242", "021000029461242"]);
  });
});

describe("NACHA reader: the 100,000-entry file (fixtures ach/large), streamed from gzip", () => {
  it("reads all 200 batches and every entry, their sums agreeing with the file control", async () => {
    const { createReadStream } = await import("node:fs");
    const { createGunzip } = await import("node:zlib");
    let entries = 0;
    let credit = 0n;
    let batches = 0;
    let control: { entryAddendaCount: number; totalCredit: bigint; batchCount: number } | undefined;
    for await (const ev of readNacha(createReadStream(achFixture("large", "PPD-200-batches-100000-entries.ach.gz")).pipe(createGunzip()))) {
      if (ev.type === "entry") {
        entries += 1;
        if (ev.entry.transaction.direction === "credit") credit += ev.entry.amount;
      } else if (ev.type === "batchControl") batches += 1;
      else if (ev.type === "fileControl") control = ev.control;
    }
    expect(batches).toBe(200);
    expect(control).toMatchObject({ batchCount: 200, entryAddendaCount: entries, totalCredit: credit });
    expect(entries).toBeGreaterThanOrEqual(100_000);
  });
});
