// Reads NACHA files a bank sends: its returns (type 99 addenda with R-codes), notifications of
// change (COR batches, type 98 addenda with C-codes and corrected data), and entries received as
// RDFI (incoming credits and debits). The reader streams: it holds one record and the running
// totals of the open batch, never the whole file, and checks every control total as it closes a
// batch and the file. Anything it cannot vouch for is refused with NachaFormatError naming the
// line, the record and what is wrong; it never returns a partly read file.
import {
  CHANGE_CODES, type ChangeField, READABLE_SEC_CODES, RETURN_CODES, type ReturnCodeInfo, SERVICE_CLASS_CODES, TRANSACTION_CODES,
  type TransactionCodeInfo,
} from "./codes.js";
import { BLOCKING_FACTOR, entryHashDigits, FILLER_RECORD, RECORD_LENGTH, routingCheckDigit } from "./fields.js";

export class NachaFormatError extends Error {
  constructor(readonly line: number, readonly record: string, readonly reason: string) {
    super(line > 0 ? `line ${line} (${record}): ${reason}` : `${record}: ${reason}`);
    this.name = "NachaFormatError";
  }
}

export interface FileHeader {
  readonly immediateDestination: string;
  readonly immediateOrigin: string;
  readonly creationDate: string;
  readonly creationTime: string;
  readonly fileIdModifier: string;
  readonly immediateDestinationName: string;
  readonly immediateOriginName: string;
  readonly referenceCode: string;
}

export interface BatchHeader {
  readonly line: number;
  readonly serviceClassCode: string;
  readonly companyName: string;
  readonly companyDiscretionaryData: string;
  readonly companyIdentification: string;
  readonly secCode: string;
  readonly companyEntryDescription: string;
  readonly companyDescriptiveDate: string;
  readonly effectiveEntryDate: string;
  readonly settlementDate: string;
  readonly originatorStatusCode: string;
  readonly odfiIdentification: string;
  readonly batchNumber: number;
}

export interface ReturnAddenda {
  readonly code: string;
  /** Undefined for a custom code the operator allowed (ACH_CUSTOM_RETURN_CODES). */
  readonly info: ReturnCodeInfo | undefined;
  /** The trace number of the entry being returned: the one the originator wrote. */
  readonly originalTraceNumber: string;
  readonly dateOfDeath: string;
  readonly originalRdfi: string;
  readonly addendaInformation: string;
  readonly traceNumber: string;
  /** Set for dishonored (R61–R70) and contested dishonored (R71–R77) returns. */
  readonly dishonored?: { readonly returnTraceNumber: string; readonly returnSettlementDate: string; readonly returnReasonCode: string };
}

export interface ChangeAddenda {
  readonly code: string;
  readonly description: string;
  readonly refused: boolean;
  readonly originalTraceNumber: string;
  readonly originalRdfi: string;
  readonly correctedData: string;
  /** The corrected values by field, parsed from correctedData per the C-code's layout. */
  readonly corrections: Readonly<Partial<Record<ChangeField, string>>>;
  readonly traceNumber: string;
}

export interface EntryDetail {
  readonly line: number;
  readonly transactionCode: string;
  readonly transaction: TransactionCodeInfo;
  /** The receiving DFI's 9-digit routing number (8-digit identification and check digit). */
  readonly routingNumber: string;
  readonly accountNumber: string;
  readonly amount: bigint;
  readonly identificationNumber: string;
  readonly name: string;
  readonly discretionaryData: string;
  readonly traceNumber: string;
  /** Payment-related information of type 02/05 addenda, in order. */
  readonly paymentRelatedInformation: readonly string[];
  readonly return?: ReturnAddenda;
  readonly change?: ChangeAddenda;
}

export interface BatchControl {
  readonly entryAddendaCount: number;
  readonly entryHash: string;
  readonly totalDebit: bigint;
  readonly totalCredit: bigint;
}

export interface FileControl extends BatchControl {
  readonly batchCount: number;
  readonly blockCount: number;
  /** What disagrees without putting money in doubt (see fileControl): kept for the operator's log. */
  readonly warnings: readonly string[];
}

export type NachaEvent =
  | { readonly type: "fileHeader"; readonly header: FileHeader }
  | { readonly type: "batchHeader"; readonly batch: BatchHeader }
  | { readonly type: "entry"; readonly batch: BatchHeader; readonly entry: EntryDetail }
  | { readonly type: "batchControl"; readonly batch: BatchHeader; readonly control: BatchControl }
  | { readonly type: "fileControl"; readonly control: FileControl };

export interface ReadOptions {
  /** Return reason codes outside the NACHA table that this bank uses (e.g. ["R97"]). */
  readonly customReturnCodes?: readonly string[];
}

const NAMES: Record<string, string> = { "1": "file header", "5": "batch header", "6": "entry detail", "7": "addenda", "8": "batch control", "9": "file control" };

function digits(line: number, record: string, field: string, v: string): string {
  if (!/^[0-9]+$/.test(v)) throw new NachaFormatError(line, record, `${field} must be digits (got ${JSON.stringify(v)})`);
  return v;
}

/** Parses the corrected data of a notification of change by its C-code's layout. */
function corrections(code: string, data: string): Partial<Record<ChangeField, string>> {
  const f = (a: number, b: number) => data.slice(a, b).trim();
  switch (code) {
    case "C01": return { accountNumber: f(0, 17) };
    case "C02": return { routingNumber: f(0, 9) };
    case "C03": return { routingNumber: f(0, 9), accountNumber: f(12, 29) };
    case "C04": return { name: f(0, 22) };
    case "C05": return { transactionCode: f(0, 2) };
    case "C06": return { accountNumber: f(0, 17), transactionCode: f(21, 23) };
    case "C07": return { routingNumber: f(0, 9), accountNumber: f(9, 26), transactionCode: f(26, 28) };
    case "C08": return { routingNumber: f(0, 29) };
    case "C09": return { individualId: f(0, 22) };
    case "C10": return { name: f(0, 16) };
    case "C11": return { individualId: f(0, 10) };
    case "C12": return { name: f(0, 16), individualId: f(16, 29) };
    default: return {};
  }
}

interface OpenBatch {
  header: BatchHeader;
  count: number;
  hash: bigint;
  debit: bigint;
  credit: bigint;
  pending: {
    entry: EntryDetail;
    expectsAddenda: boolean;
    addendaSeen: number;
    pri: string[];
    ret?: ReturnAddenda;
    chg?: ChangeAddenda;
    /** IAT: the addenda count the entry declares, the mandatory types 10-16 seen, the receiver's name from addenda 10. */
    iat?: { declared: number; types: Set<string>; name: string };
  } | undefined;
}

/** The record-by-record state machine. Feed it records in order; it returns the events each completes. */
export class NachaParser {
  private state: "start" | "file" | "batch" | "end" = "start";
  private batch: OpenBatch | undefined;
  private batches = 0;
  private count = 0;
  private hash = 0n;
  private debit = 0n;
  private credit = 0n;
  private records = 0;
  private lastBatchNumber = -1;
  private readonly custom: ReadonlySet<string>;

  constructor(opts: ReadOptions = {}) {
    this.custom = new Set(opts.customReturnCodes ?? []);
  }

  record(text: string, line: number): NachaEvent[] {
    if (text.length > RECORD_LENGTH) throw new NachaFormatError(line, NAMES[text[0]!] ?? "record", `is ${text.length} characters long; a NACHA record is ${RECORD_LENGTH}`);
    if (text.length < RECORD_LENGTH) {
      // Some senders strip trailing blanks; such a line ends in a non-blank. A short line that
      // still ends in blanks was cut or padded wrongly: its fields cannot be located.
      if (text.length === 0 || text.endsWith(" ")) {
        throw new NachaFormatError(line, NAMES[text[0] ?? ""] ?? "record", `is ${text.length} characters long; a NACHA record is ${RECORD_LENGTH}`);
      }
      text = text.padEnd(RECORD_LENGTH, " ");
    }
    if (this.state === "end") {
      if (text === FILLER_RECORD) return [];
      throw new NachaFormatError(line, NAMES[text[0]!] ?? "record", "appears after the file control record; only 9-filled records may follow it");
    }
    this.records += 1;
    const type = text[0]!;
    const events: NachaEvent[] = [];
    switch (type) {
      case "1": this.fileHeader(text, line, events); break;
      case "5": this.batchHeader(text, line, events); break;
      case "6": this.entry(text, line, events); break;
      case "7": this.addenda(text, line); break;
      case "8": this.batchControl(text, line, events); break;
      case "9": this.fileControl(text, line, events); break;
      default: throw new NachaFormatError(line, "record", `record type code ${JSON.stringify(type)} is not one of 1, 5, 6, 7, 8, 9`);
    }
    return events;
  }

  /** Call after the last record: a file without its file control record is refused. */
  end(): void {
    if (this.state === "start") throw new NachaFormatError(0, "file", "is empty: no file header record (1)");
    if (this.state !== "end") throw new NachaFormatError(0, "file", this.state === "batch" ? "ends inside a batch: no batch control (8) and no file control (9)" : "ends without a file control record (9)");
  }

  private fileHeader(t: string, line: number, events: NachaEvent[]): void {
    const R = "file header";
    if (this.state !== "start") throw new NachaFormatError(line, R, "a file has one file header, as its first record");
    if (t.slice(1, 3) !== "01") throw new NachaFormatError(line, R, `priority code must be 01 (got ${JSON.stringify(t.slice(1, 3))})`);
    const dest = t.slice(3, 13).trim();
    digits(line, R, "immediate destination", dest);
    const created = digits(line, R, "file creation date", t.slice(23, 29));
    if (t.slice(34, 37) !== "094") throw new NachaFormatError(line, R, `record size must be 094 (got ${JSON.stringify(t.slice(34, 37))})`);
    if (t.slice(37, 39) !== "10") throw new NachaFormatError(line, R, `blocking factor must be 10 (got ${JSON.stringify(t.slice(37, 39))})`);
    if (t[39] !== "1") throw new NachaFormatError(line, R, `format code must be 1 (got ${JSON.stringify(t[39])})`);
    if (!/^[A-Za-z0-9 ]$/.test(t[33]!)) throw new NachaFormatError(line, R, "file ID modifier must be A-Z or 0-9");
    this.state = "file";
    events.push({
      type: "fileHeader",
      header: {
        immediateDestination: dest,
        immediateOrigin: t.slice(13, 23).trim(),
        creationDate: created,
        creationTime: t.slice(29, 33).trim(),
        fileIdModifier: t[33]!,
        immediateDestinationName: t.slice(40, 63).trim(),
        immediateOriginName: t.slice(63, 86).trim(),
        referenceCode: t.slice(86, 94).trim(),
      },
    });
  }

  private batchHeader(t: string, line: number, events: NachaEvent[]): void {
    const R = "batch header";
    if (this.state === "start") throw new NachaFormatError(line, R, "comes before the file header; a file starts with a file header record (1)");
    if (this.state === "batch") throw new NachaFormatError(line, R, "opens a batch while the previous one has no batch control (8)");
    const serviceClassCode = t.slice(1, 4);
    if (!SERVICE_CLASS_CODES.has(serviceClassCode)) throw new NachaFormatError(line, R, `service class code ${JSON.stringify(serviceClassCode)} is not 200, 220, 225 or 280`);
    const secCode = t.slice(50, 53);
    if (!READABLE_SEC_CODES.has(secCode)) throw new NachaFormatError(line, R, `standard entry class code ${JSON.stringify(secCode)} is not a NACHA SEC code`);
    const eff = t.slice(69, 75);
    if (!/^([0-9]{6}| {6})$/.test(eff)) throw new NachaFormatError(line, R, `effective entry date must be YYMMDD (got ${JSON.stringify(eff)})`);
    const odfi = digits(line, R, "originating DFI identification", t.slice(79, 87));
    const batchNumber = Number(digits(line, R, "batch number", t.slice(87, 94)));
    if (batchNumber <= this.lastBatchNumber) throw new NachaFormatError(line, R, `batch number ${batchNumber} does not ascend (previous ${this.lastBatchNumber})`);
    this.lastBatchNumber = batchNumber;
    const header: BatchHeader = {
      line,
      serviceClassCode,
      companyName: t.slice(4, 20).trim(),
      companyDiscretionaryData: t.slice(20, 40).trim(),
      companyIdentification: t.slice(40, 50).trim(),
      secCode,
      companyEntryDescription: t.slice(53, 63).trim(),
      companyDescriptiveDate: t.slice(63, 69).trim(),
      effectiveEntryDate: eff.trim(),
      settlementDate: t.slice(75, 78).trim(),
      originatorStatusCode: t[78]!,
      odfiIdentification: odfi,
      batchNumber,
    };
    this.batch = { header, count: 0, hash: 0n, debit: 0n, credit: 0n, pending: undefined };
    this.state = "batch";
    events.push({ type: "batchHeader", batch: header });
  }

  private flushEntry(events: NachaEvent[]): void {
    const b = this.batch!;
    const p = b.pending;
    if (!p) return;
    b.pending = undefined;
    const e = p.entry;
    if (p.expectsAddenda && p.addendaSeen === 0) throw new NachaFormatError(e.line, "entry detail", "addenda record indicator is 1 but no addenda record follows");
    if (b.header.secCode === "COR" && !p.chg) throw new NachaFormatError(e.line, "entry detail", "an entry of a COR (notification of change) batch needs a type 98 addenda");
    if (p.iat && !p.ret && !p.chg) {
      for (const t of ["10", "11", "12", "13", "14", "15", "16"]) {
        if (!p.iat.types.has(t)) throw new NachaFormatError(e.line, "entry detail", `an IAT entry needs addenda type ${t}`);
      }
      if (p.addendaSeen !== p.iat.declared) throw new NachaFormatError(e.line, "entry detail", `declares ${p.iat.declared} addenda records but ${p.addendaSeen} follow`);
    }
    events.push({ type: "entry", batch: b.header, entry: { ...e, ...(p.iat && !e.name ? { name: p.iat.name } : {}), paymentRelatedInformation: p.pri, ...(p.ret ? { return: p.ret } : {}), ...(p.chg ? { change: p.chg } : {}) } });
  }

  private entry(t: string, line: number, events: NachaEvent[]): void {
    const R = "entry detail";
    if (this.state !== "batch") throw new NachaFormatError(line, R, "is outside a batch: no batch header (5) opens it");
    this.flushEntry(events);
    const b = this.batch!;
    const code = t.slice(1, 3);
    const transaction = TRANSACTION_CODES[code];
    if (!transaction) throw new NachaFormatError(line, R, `transaction code ${JSON.stringify(code)} is not a NACHA transaction code`);
    if (b.header.serviceClassCode === "220" && transaction.direction === "debit") throw new NachaFormatError(line, R, "a debit in a credits-only (220) batch");
    if (b.header.serviceClassCode === "225" && transaction.direction === "credit") throw new NachaFormatError(line, R, "a credit in a debits-only (225) batch");
    const rdfi = digits(line, R, "receiving DFI identification", t.slice(3, 11));
    const check = digits(line, R, "check digit", t[11]!);
    if (routingCheckDigit(rdfi) !== Number(check)) throw new NachaFormatError(line, R, `check digit ${check} is wrong for receiving DFI ${rdfi} (expected ${routingCheckDigit(rdfi)})`);
    const amount = BigInt(digits(line, R, "amount", t.slice(29, 39)));
    const indicator = t[78]!;
    if (indicator !== "0" && indicator !== "1") throw new NachaFormatError(line, R, `addenda record indicator must be 0 or 1 (got ${JSON.stringify(indicator)})`);
    const trace = digits(line, R, "trace number", t.slice(79, 94));
    if (trace.slice(0, 8) !== b.header.odfiIdentification) {
      throw new NachaFormatError(line, R, `trace number ${trace} does not start with the batch's originating DFI ${b.header.odfiIdentification}`);
    }
    b.count += 1;
    b.hash += BigInt(rdfi);
    if (transaction.direction === "debit") b.debit += amount;
    else b.credit += amount;
    // An IAT entry keeps the number of its addenda at 13-16 and the foreign receiver's account at
    // 40-74; its names and addresses are in addenda 10-16.
    const iat = b.header.secCode === "IAT";
    if (iat && indicator !== "1") throw new NachaFormatError(line, R, "an IAT entry has addenda: its addenda record indicator must be 1");
    b.pending = {
      entry: {
        line,
        transactionCode: code,
        transaction,
        routingNumber: rdfi + check,
        accountNumber: iat ? t.slice(39, 74).trim() : t.slice(12, 29).trim(),
        amount,
        identificationNumber: iat ? "" : t.slice(39, 54).trim(),
        name: iat ? "" : t.slice(54, 76).trim(),
        discretionaryData: iat ? "" : t.slice(76, 78).trim(),
        traceNumber: trace,
        paymentRelatedInformation: [],
      },
      expectsAddenda: indicator === "1",
      addendaSeen: 0,
      pri: [],
      ...(iat ? { iat: { declared: Number(digits(line, R, "number of addenda records", t.slice(12, 16))), types: new Set<string>(), name: "" } } : {}),
    };
  }

  private addenda(t: string, line: number): void {
    const R = "addenda";
    if (this.state !== "batch" || !this.batch!.pending) throw new NachaFormatError(line, R, "does not follow an entry detail record (6)");
    const b = this.batch!;
    const p = b.pending!;
    if (!p.expectsAddenda) throw new NachaFormatError(line, R, "follows an entry whose addenda record indicator is 0");
    const typeCode = t.slice(1, 3);
    p.addendaSeen += 1;
    b.count += 1;
    switch (typeCode) {
      case "02":
      case "05": {
        if (typeCode === "05") {
          const seq = Number(digits(line, R, "addenda sequence number", t.slice(83, 87)));
          if (seq !== p.addendaSeen) throw new NachaFormatError(line, R, `addenda sequence number ${seq} should be ${p.addendaSeen}`);
          const entrySeq = digits(line, R, "entry detail sequence number", t.slice(87, 94));
          if (entrySeq !== p.entry.traceNumber.slice(8)) throw new NachaFormatError(line, R, `entry detail sequence number ${entrySeq} is not the last 7 digits of the entry's trace number ${p.entry.traceNumber}`);
        }
        p.pri.push(t.slice(3, 83).trim());
        return;
      }
      case "98": {
        if (p.addendaSeen !== 1) throw new NachaFormatError(line, R, "an entry has one notification-of-change addenda");
        const code = t.slice(3, 6);
        const info = CHANGE_CODES[code];
        if (!info) throw new NachaFormatError(line, R, `change code ${JSON.stringify(code)} is not a NACHA C-code (C01-C14, C61-C69)`);
        const correctedData = t.slice(35, 64);
        const corr = corrections(code, correctedData);
        if (corr.routingNumber !== undefined && code !== "C08" && !/^[0-9]{9}$/.test(corr.routingNumber)) {
          throw new NachaFormatError(line, R, `${code} corrected routing number ${JSON.stringify(corr.routingNumber)} is not 9 digits`);
        }
        if (info.fields.length > 0 && correctedData.trim() === "") throw new NachaFormatError(line, R, `${code} carries no corrected data`);
        p.chg = {
          code,
          description: info.description,
          refused: info.refused,
          originalTraceNumber: digits(line, R, "original entry trace number", t.slice(6, 21)),
          originalRdfi: digits(line, R, "original receiving DFI identification", t.slice(27, 35)),
          correctedData: correctedData.trim(),
          corrections: corr,
          traceNumber: digits(line, R, "trace number", t.slice(79, 94)),
        };
        return;
      }
      case "99": {
        if (p.addendaSeen !== 1) throw new NachaFormatError(line, R, "an entry has one return addenda");
        const code = t.slice(3, 6);
        const info = RETURN_CODES[code];
        if (!info && !this.custom.has(code)) throw new NachaFormatError(line, R, `return reason code ${JSON.stringify(code)} is not a NACHA R-code nor one of the bank's custom codes`);
        const dishonored = info && info.kind !== "return";
        p.ret = {
          code,
          info,
          originalTraceNumber: digits(line, R, "original entry trace number", t.slice(6, 21)),
          dateOfDeath: dishonored ? "" : t.slice(21, 27).trim(),
          originalRdfi: digits(line, R, "original receiving DFI identification", t.slice(27, 35)),
          addendaInformation: (dishonored ? t.slice(58, 79) : t.slice(35, 79)).trim(),
          traceNumber: digits(line, R, "trace number", t.slice(79, 94)),
          ...(dishonored
            ? { dishonored: { returnTraceNumber: t.slice(38, 53).trim(), returnSettlementDate: t.slice(53, 56).trim(), returnReasonCode: t.slice(56, 58).trim() } }
            : {}),
        };
        return;
      }
      default: {
        if (p.iat && /^1[0-8]$/.test(typeCode)) {
          const entrySeq = digits(line, R, "entry detail sequence number", t.slice(87, 94));
          if (entrySeq !== p.entry.traceNumber.slice(8)) throw new NachaFormatError(line, R, `entry detail sequence number ${entrySeq} is not the last 7 digits of the entry's trace number ${p.entry.traceNumber}`);
          if (typeCode <= "16" && p.iat.types.has(typeCode)) throw new NachaFormatError(line, R, `IAT addenda type ${typeCode} appears twice for one entry`);
          p.iat.types.add(typeCode);
          if (typeCode === "10") p.iat.name = t.slice(46, 81).trim();
          if (typeCode === "17" || typeCode === "18") p.pri.push(t.slice(3, 83).trim());
          return;
        }
        throw new NachaFormatError(line, R, `addenda type code ${JSON.stringify(typeCode)} is not supported here (02, 05, 98, 99; 10-18 in IAT batches)`);
      }
    }
  }

  private batchControl(t: string, line: number, events: NachaEvent[]): void {
    const R = "batch control";
    if (this.state !== "batch") throw new NachaFormatError(line, R, "closes no batch: no batch header (5) before it");
    this.flushEntry(events);
    const b = this.batch!;
    const h = b.header;
    if (b.count === 0) throw new NachaFormatError(line, R, "closes a batch without entries");
    if (t.slice(1, 4) !== h.serviceClassCode) throw new NachaFormatError(line, R, `service class code ${t.slice(1, 4)} differs from the batch header's ${h.serviceClassCode}`);
    const count = Number(digits(line, R, "entry/addenda count", t.slice(4, 10)));
    const hash = digits(line, R, "entry hash", t.slice(10, 20));
    const debit = BigInt(digits(line, R, "total debit", t.slice(20, 32)));
    const credit = BigInt(digits(line, R, "total credit", t.slice(32, 44)));
    if (count !== b.count) throw new NachaFormatError(line, R, `entry/addenda count ${count} but the batch has ${b.count} entry and addenda records`);
    if (hash !== entryHashDigits(b.hash)) throw new NachaFormatError(line, R, `entry hash ${hash} but the entries' routing numbers sum to ${entryHashDigits(b.hash)}`);
    if (debit !== b.debit) throw new NachaFormatError(line, R, `total debit ${debit} but the debit entries sum to ${b.debit}`);
    if (credit !== b.credit) throw new NachaFormatError(line, R, `total credit ${credit} but the credit entries sum to ${b.credit}`);
    if (t.slice(44, 54).trim() !== h.companyIdentification) throw new NachaFormatError(line, R, `company identification ${JSON.stringify(t.slice(44, 54).trim())} differs from the batch header's ${JSON.stringify(h.companyIdentification)}`);
    if (t.slice(79, 87) !== h.odfiIdentification) throw new NachaFormatError(line, R, `originating DFI ${t.slice(79, 87)} differs from the batch header's ${h.odfiIdentification}`);
    const batchNumber = Number(digits(line, R, "batch number", t.slice(87, 94)));
    if (batchNumber !== h.batchNumber) throw new NachaFormatError(line, R, `batch number ${batchNumber} differs from the batch header's ${h.batchNumber}`);
    this.batches += 1;
    this.count += b.count;
    this.hash += b.hash;
    this.debit += b.debit;
    this.credit += b.credit;
    this.batch = undefined;
    this.state = "file";
    events.push({ type: "batchControl", batch: h, control: { entryAddendaCount: count, entryHash: hash, totalDebit: debit, totalCredit: credit } });
  }

  private fileControl(t: string, line: number, events: NachaEvent[]): void {
    const R = "file control";
    if (this.state === "start") throw new NachaFormatError(line, R, "comes before the file header; a file starts with a file header record (1)");
    if (this.state === "batch") throw new NachaFormatError(line, R, "comes inside a batch: the batch has no batch control (8)");
    const batchCount = Number(digits(line, R, "batch count", t.slice(1, 7)));
    const blockCount = Number(digits(line, R, "block count", t.slice(7, 13)));
    const count = Number(digits(line, R, "entry/addenda count", t.slice(13, 21)));
    const hash = digits(line, R, "entry hash", t.slice(21, 31));
    const debit = BigInt(digits(line, R, "total debit", t.slice(31, 43)));
    const credit = BigInt(digits(line, R, "total credit", t.slice(43, 55)));
    // A batch count that disagrees is tolerated with a warning: every batch holds at least one
    // entry, so a missing or extra batch always shows in the entry/addenda count, the entry hash
    // and the totals, which must agree. (US Bank's 20110805A numbers its batches 1, 3, 4, 5 and
    // counts 5.)
    const warnings = batchCount === this.batches ? [] : [`file control batch count ${batchCount} but the file has ${this.batches} batches`];
    const blocks = Math.ceil(this.records / BLOCKING_FACTOR);
    if (blockCount !== blocks) throw new NachaFormatError(line, R, `block count ${blockCount} but ${this.records} records make ${blocks} blocks of ${BLOCKING_FACTOR}`);
    if (count !== this.count) throw new NachaFormatError(line, R, `entry/addenda count ${count} but the batches hold ${this.count}`);
    if (hash !== entryHashDigits(this.hash)) throw new NachaFormatError(line, R, `entry hash ${hash} but the batches' hashes sum to ${entryHashDigits(this.hash)}`);
    if (debit !== this.debit) throw new NachaFormatError(line, R, `total debit ${debit} but the batches' debits sum to ${this.debit}`);
    if (credit !== this.credit) throw new NachaFormatError(line, R, `total credit ${credit} but the batches' credits sum to ${this.credit}`);
    this.state = "end";
    events.push({ type: "fileControl", control: { batchCount, blockCount, entryAddendaCount: count, entryHash: hash, totalDebit: debit, totalCredit: credit, warnings } });
  }
}

/** Splits bytes into records: newline-separated lines (LF or CRLF), or — for a file without line
 * breaks — consecutive 94-character blocks. Refuses any byte outside printable ASCII. */
export class RecordSplitter {
  private carry = "";
  private line = 0;
  private blocked: boolean | undefined;

  /** Returns [record, lineNumber] pairs complete in this chunk. */
  push(chunk: Uint8Array | string): Array<[string, number]> {
    const buf = typeof chunk === "string" ? Buffer.from(chunk, "latin1") : chunk;
    for (let i = 0; i < buf.length; i++) {
      const b = buf[i]!;
      if ((b < 0x20 || b > 0x7e) && b !== 0x0a && b !== 0x0d) {
        const lineNo = this.line + 1 + countLf(buf, i);
        throw new NachaFormatError(lineNo, "file", `byte 0x${b.toString(16).padStart(2, "0")} is not printable ASCII; NACHA files are ASCII only`);
      }
    }
    const text = this.carry + Buffer.from(buf).toString("latin1");
    const out: Array<[string, number]> = [];
    if (this.blocked === undefined) {
      const nl = text.search(/[\r\n]/);
      const first = nl === -1 ? text.length : nl;
      if (first <= RECORD_LENGTH && nl === -1) {
        this.carry = text;
        return out;
      }
      this.blocked = first > RECORD_LENGTH;
    }
    if (this.blocked) {
      let pos = 0;
      while (text.length - pos >= RECORD_LENGTH) {
        const rec = text.slice(pos, pos + RECORD_LENGTH);
        const brk = rec.search(/[\r\n]/);
        if (brk !== -1) {
          // Only the file's final line break may follow its last record.
          if (/^[\r\n]*$/.test(text.slice(pos))) break;
          throw new NachaFormatError(this.line + 1, "file", "a line break inside a record of a file without line breaks");
        }
        this.line += 1;
        out.push([rec, this.line]);
        pos += RECORD_LENGTH;
      }
      this.carry = text.slice(pos);
      return out;
    }
    let start = 0;
    for (;;) {
      const nl = text.indexOf("\n", start);
      if (nl === -1) break;
      let rec = text.slice(start, nl);
      if (rec.endsWith("\r")) rec = rec.slice(0, -1);
      this.line += 1;
      if (rec.includes("\r")) throw new NachaFormatError(this.line, "file", "a carriage return inside a line");
      out.push([rec, this.line]);
      start = nl + 1;
    }
    this.carry = text.slice(start);
    if (this.carry.length > 4 * RECORD_LENGTH) throw new NachaFormatError(this.line + 1, "record", `is over ${this.carry.length} characters long; a NACHA record is ${RECORD_LENGTH}`);
    return out;
  }

  /** The last record when the file does not end with a line break. */
  end(): Array<[string, number]> {
    const rest = this.blocked ? this.carry.replace(/[\r\n]+$/, "") : this.carry.replace(/\r$/, "");
    this.carry = "";
    if (rest.length === 0) return [];
    if (this.blocked) throw new NachaFormatError(this.line + 1, "file", `ends with ${rest.length} characters, not a whole ${RECORD_LENGTH}-character record`);
    this.line += 1;
    return [[rest, this.line]];
  }
}

function countLf(buf: Uint8Array, upTo: number): number {
  let n = 0;
  for (let i = 0; i < upTo; i++) if (buf[i] === 0x0a) n += 1;
  return n;
}

/** Streams a file's events from its bytes. Events come as records are read; a consumer that acts
 * on money must wait for the fileControl event (or use parseNachaFile) before acting. */
export async function* readNacha(source: AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>, opts: ReadOptions = {}): AsyncGenerator<NachaEvent> {
  const splitter = new RecordSplitter();
  const parser = new NachaParser(opts);
  let trailingBlank = false;
  const feed = function* (records: Array<[string, number]>): Generator<NachaEvent> {
    for (const [rec, line] of records) {
      if (rec.length === 0) {
        trailingBlank = true;
        continue;
      }
      if (trailingBlank) throw new NachaFormatError(line, "file", "an empty line before it; empty lines may only end a file");
      yield* parser.record(rec, line);
    }
  };
  for await (const chunk of source) yield* feed(splitter.push(chunk));
  yield* feed(splitter.end());
  parser.end();
}

export interface ParsedBatch {
  readonly header: BatchHeader;
  readonly entries: readonly EntryDetail[];
  readonly control: BatchControl;
}

export interface ParsedNachaFile {
  readonly header: FileHeader;
  readonly batches: readonly ParsedBatch[];
  readonly control: FileControl;
}

/** Reads a whole (small) file into memory: for return, NOC and acknowledgement files. */
export async function parseNachaFile(content: Uint8Array | string, opts: ReadOptions = {}): Promise<ParsedNachaFile> {
  let header: FileHeader | undefined;
  let control: FileControl | undefined;
  const batches: ParsedBatch[] = [];
  let entries: EntryDetail[] = [];
  for await (const ev of readNacha([content], opts)) {
    switch (ev.type) {
      case "fileHeader": header = ev.header; break;
      case "batchHeader": entries = []; break;
      case "entry": entries.push(ev.entry); break;
      case "batchControl": batches.push({ header: ev.batch, entries, control: ev.control }); break;
      case "fileControl": control = ev.control; break;
    }
  }
  return { header: header!, batches, control: control! };
}
