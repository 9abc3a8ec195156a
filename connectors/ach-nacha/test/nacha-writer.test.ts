import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { NachaWriteError, parseNachaFile, writeNachaFile, type OutgoingBatch, type OutgoingEntry, type OutgoingFile } from "../src/nacha/index.js";
import { bankReadsUpload, bankWritesReturnFile } from "./bank/simulator.js";

const ODFI = "121042882";

const entry = (over: Partial<OutgoingEntry> = {}): OutgoingEntry => ({
  direction: "credit",
  accountType: "CHECKING",
  routingNumber: "231380104",
  accountNumber: "12345678",
  amount: 12_345n,
  identificationNumber: "tx-1",
  receiverName: "Jane Doe",
  traceSequence: 1,
  ...over,
});

const batch = (over: Partial<OutgoingBatch> = {}): OutgoingBatch => ({
  secCode: "PPD",
  companyName: "Corridor",
  companyIdentification: "1234567890",
  companyEntryDescription: "PAYOUT",
  effectiveEntryDate: "261130",
  batchNumber: 1,
  entries: [entry()],
  ...over,
});

const file = (over: Partial<OutgoingFile> = {}): OutgoingFile => ({
  immediateDestination: ODFI,
  immediateDestinationName: "Wells Fargo",
  immediateOrigin: "1234567890",
  immediateOriginName: "Corridor Inc",
  odfiRouting: ODFI,
  creationDate: "261127",
  creationTime: "1805",
  fileIdModifier: "A",
  batches: [batch()],
  ...over,
});

describe("NACHA writer", () => {
  it("writes PPD credits and debits and a CCD batch that an independent parser (node-nacha) reads back record for record, with every control agreeing", () => {
    const w = writeNachaFile(file({
      batches: [
        batch({ entries: [entry({ traceSequence: 1 }), entry({ direction: "debit", accountType: "SAVINGS", routingNumber: "021200025", accountNumber: "998877", amount: 500n, identificationNumber: "tx-2", receiverName: "John Roe", traceSequence: 2, paymentRelatedInformation: "invoice 2" })] }),
        batch({ secCode: "CCD", batchNumber: 2, entries: [entry({ amount: 99n, identificationNumber: "tx-3", receiverName: "Acme LLC", traceSequence: 3 })] }),
      ],
    }));
    const seen = bankReadsUpload(w.text);
    expect(seen.map((e) => [e.secCode, e.transactionCode, e.routingNumber, e.amount, e.identificationNumber, e.traceNumber])).toEqual([
      ["PPD", "22", "231380104", 12_345n, "tx-1", "121042880000001"],
      ["PPD", "37", "021200025", 500n, "tx-2", "121042880000002"],
      ["CCD", "22", "231380104", 99n, "tx-3", "121042880000003"],
    ]);
    expect(seen[1]!.addenda).toBe("invoice 2");
    expect(w).toMatchObject({ entryCount: 3, totalDebit: 500n, totalCredit: 12_444n, traceNumbers: ["121042880000001", "121042880000002", "121042880000003"] });
  });

  it("writes the return of a received credit (rail contract 1.3 RETURN): code 21/31, a type 99 addenda with reason, original trace and RDFI; node-nacha and Corridor's reader read it, controls balanced", async () => {
    const ret = (over: Partial<OutgoingEntry> = {}) =>
      entry({ routingNumber: "091000019", accountNumber: "5550001111", amount: 4_321n, identificationNumber: "NOT OURS 9", receiverName: "Corridor", returnOf: { reasonCode: "R23", originalTraceNumber: "091000010000042", originalRdfi: "23138010" }, ...over });
    const w = writeNachaFile(file({
      batches: [
        batch({ companyName: "WRONG PAYER", companyIdentification: "5550002222", companyEntryDescription: "RETURN", entries: [ret({ traceSequence: 7 }), ret({ accountType: "SAVINGS", amount: 100n, traceSequence: 8, returnOf: { reasonCode: "R17", originalTraceNumber: "091000010000043", originalRdfi: "23138010", information: "REFUSED" } })] }),
      ],
    }));
    // The independent parser (node-nacha) reads it record for record; the test bank checks every control.
    const seen = bankReadsUpload(w.text);
    expect(seen.map((e) => [e.secCode, e.transactionCode, e.routingNumber, e.accountNumber.trim(), e.amount, e.traceNumber])).toEqual([
      ["PPD", "21", "091000019", "5550001111", 4_321n, "121042880000007"],
      ["PPD", "31", "091000019", "5550001111", 100n, "121042880000008"],
    ]);
    expect(w).toMatchObject({ entryCount: 2, totalDebit: 0n, totalCredit: 4_421n });
    // The type 99 addenda, field by field (NACHA: type, reason, original trace, date of death, original RDFI, information, trace).
    const lines = w.text.split("\n");
    expect(lines[1]!.slice(1, 4)).toBe("220");
    expect(lines[2]!.slice(78, 79)).toBe("1");
    const addenda = lines[3]!;
    expect([addenda.slice(0, 1), addenda.slice(1, 3), addenda.slice(3, 6), addenda.slice(6, 21), addenda.slice(21, 27), addenda.slice(27, 35), addenda.slice(35, 79).trim(), addenda.slice(79, 94)]).toEqual(["7", "99", "R23", "091000010000042", "      ", "23138010", "", "121042880000007"]);
    expect(lines[5]!.slice(35, 79).trim()).toBe("REFUSED");
    // Corridor's own reader sees returns with their reason and original trace.
    const parsed = await parseNachaFile(w.text);
    expect(parsed.batches[0]!.entries.map((e) => [e.return?.code, e.return?.originalTraceNumber, e.return?.originalRdfi])).toEqual([
      ["R23", "091000010000042", "23138010"],
      ["R17", "091000010000043", "23138010"],
    ]);
    // What cannot be a return entry is refused, naming the field.
    expect(() => writeNachaFile(file({ batches: [batch({ entries: [ret({ direction: "debit" })] })] }))).toThrow(/direction: a return entry returns a credit/);
    expect(() => writeNachaFile(file({ batches: [batch({ entries: [ret({ paymentRelatedInformation: "x" })] })] }))).toThrow(/paymentRelatedInformation/);
    expect(() => writeNachaFile(file({ batches: [batch({ entries: [ret({ returnOf: { reasonCode: "X23", originalTraceNumber: "091000010000042", originalRdfi: "23138010" } })] })] }))).toThrow(/reasonCode/);
    expect(() => writeNachaFile(file({ batches: [batch({ entries: [ret({ returnOf: { reasonCode: "R23", originalTraceNumber: "42", originalRdfi: "23138010" } })] })] }))).toThrow(/originalTraceNumber/);
  });

  it("lays out the file header, batch header, entry, batch control and file control field by field", () => {
    const lines = writeNachaFile(file()).text.split("\n");
    expect(lines[0]).toBe("101 121042882123456789026112718 05A094101WELLS FARGO            CORRIDOR INC                   ".replace("18 05", "1805"));
    expect(lines[1]).toBe("5220CORRIDOR                            1234567890PPDPAYOUT          261130   1121042880000001");
    expect(lines[2]).toBe("62223138010412345678         0000012345tx-1           JANE DOE                0121042880000001");
    expect(lines[3]).toBe("82200000010023138010000000000000000000012345" + "1234567890" + " ".repeat(25) + "12104288" + "0000001");
    expect(lines[4]).toBe("9000001000001000000010023138010000000000000000000012345" + " ".repeat(39));
    expect(lines.slice(5, 10)).toEqual(Array(5).fill("9".repeat(94)));
    expect(lines).toHaveLength(11); // ten records and the final line break
  });

  it("pads to a multiple of 10 records with 9-filled lines, and counts the blocks", () => {
    const entries = Array.from({ length: 12 }, (_, i) => entry({ traceSequence: i + 1 }));
    const text = writeNachaFile(file({ batches: [batch({ entries })] })).text;
    const lines = text.trimEnd().split("\n");
    expect(lines).toHaveLength(20); // 1 + 1 + 12 + 1 + 1 = 16 records, 4 filler
    expect(lines[15]!.slice(7, 13)).toBe("000002");
    bankReadsUpload(text);
  });

  it("refuses what it cannot write, naming the field: a bad routing check digit, an amount over 10 digits, a zero amount, a long account number, non-ASCII, duplicate or descending traces", () => {
    const bad: Array<[Partial<OutgoingEntry>[], RegExp]> = [
      [[{ routingNumber: "231380105" }], /batches\[0\]\.entries\[0\]\.routingNumber/],
      [[{ amount: 10_000_000_000n }], /amount: must be 1 to 9999999999 cents/],
      [[{ amount: 0n }], /amount/],
      [[{ accountNumber: "123456789012345678" }], /accountNumber/],
      [[{ receiverName: "Zoë" }], /receiverName: only printable ASCII/],
      [[{ traceSequence: 2 }, { traceSequence: 1 }], /trace numbers must ascend/],
    ];
    for (const [entries, re] of bad) {
      expect(() => writeNachaFile(file({ batches: [batch({ entries: entries.map((e) => entry(e)) })] }))).toThrow(re);
    }
    expect(() => writeNachaFile(file({ batches: [batch(), batch()] }))).toThrow(/batch number 1 appears twice/);
    expect(() => writeNachaFile(file({ batches: [batch({ entries: [entry({ traceSequence: 5 })] }), batch({ batchNumber: 2, entries: [entry({ traceSequence: 5 })] })] }))).toThrow(/trace number 121042880000005 appears twice/);
    expect(() => writeNachaFile(file({ batches: [] }))).toThrow(NachaWriteError);
  });

  it("round-trips through Corridor's own reader: every amount, trace and reference comes back (property)", async () => {
    const arbEntry = fc.record({
      direction: fc.constantFrom("credit" as const, "debit" as const),
      accountType: fc.constantFrom("CHECKING" as const, "SAVINGS" as const),
      routingNumber: fc.constantFrom("231380104", "021200025", "121042882", "091000019"),
      accountNumber: fc.stringMatching(/^[0-9]{4,17}$/),
      amount: fc.bigInt({ min: 1n, max: 9_999_999_999n }),
      identificationNumber: fc.stringMatching(/^[A-Za-z0-9]{1,15}$/),
      receiverName: fc.stringMatching(/^[A-Z ]{1,30}$/),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(arbEntry, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 4 }), async (batches) => {
        let seq = 0;
        const out = file({
          batches: batches.map((es, i) => batch({ secCode: i % 2 ? "CCD" : "PPD", batchNumber: i + 1, entries: es.map((e) => ({ ...e, traceSequence: ++seq })) })),
        });
        const w = writeNachaFile(out);
        bankReadsUpload(w.text);
        const back = await parseNachaFile(w.text);
        const flat = out.batches.flatMap((b) => b.entries);
        const read = back.batches.flatMap((b) => b.entries);
        expect(read.map((e) => [e.amount, e.identificationNumber, e.routingNumber, e.transaction.direction])).toEqual(
          flat.map((e) => [e.amount, e.identificationNumber, e.routingNumber, e.direction]),
        );
        expect(read.map((e) => e.traceNumber)).toEqual(w.traceNumbers);
      }),
      { numRuns: 60 },
    );
  });

  it("reads the bank's return and notification-of-change files for entries it wrote (the simulator writes them independently)", async () => {
    const w = writeNachaFile(file({ batches: [batch({ entries: [entry({ traceSequence: 1 }), entry({ traceSequence: 2, amount: 777n, identificationNumber: "tx-2" })] })] }));
    const seen = bankReadsUpload(w.text);
    const ret = bankWritesReturnFile({
      bankRouting: "231380104",
      odfiRouting: ODFI,
      date: "261201",
      items: [{ entry: seen[1]!, code: "R01" }, { entry: seen[0]!, code: "C01", correctedData: "55555555" }],
    });
    const f = await parseNachaFile(ret);
    const es = f.batches.flatMap((b) => b.entries);
    expect(es.map((e) => [e.return?.code ?? e.change?.code, e.return?.originalTraceNumber ?? e.change?.originalTraceNumber, e.amount, e.identificationNumber])).toEqual([
      ["R01", "121042880000002", 777n, "tx-2"],
      ["C01", "121042880000001", 0n, "tx-1"],
    ]);
    expect(es[1]!.change!.corrections).toEqual({ accountNumber: "55555555" });
  });
});
