// The bank in tests. It reads what Corridor uploads with @midlandsbank/node-nacha — someone else's
// NACHA implementation — and accepts a file only if that parser's reading of it re-formats to the
// same records and every count, hash and total the simulator recomputes from that reading agrees.
// Its return and notification-of-change files are written here, field by field from the NACHA
// layouts, sharing no code with Corridor's writer or reader.
import nacha from "@midlandsbank/node-nacha";

const FILLER = "9".repeat(94);

export interface BankEntry {
  readonly secCode: string;
  readonly transactionCode: string;
  readonly routingNumber: string;
  readonly accountNumber: string;
  readonly amount: bigint;
  readonly identificationNumber: string;
  readonly name: string;
  readonly traceNumber: string;
  readonly addenda?: string;
  readonly effectiveDate: string;
}

export class BankRejection extends Error {}

const reject = (msg: string): never => {
  throw new BankRejection(`bank rejects the file: ${msg}`);
};

// 21 and 31: the return of a credit (22/32) an RDFI sends back; a credit code in the controls.
const CREDIT = new Set(["21", "22", "23", "24", "31", "32", "33", "34"]);
const DEBIT = new Set(["27", "28", "29", "37", "38", "39"]);

/** Reads an uploaded file as the ODFI would; throws BankRejection for anything it would refuse. */
export function bankReadsUpload(text: string): BankEntry[] {
  const lines = text.split(/\r?\n/);
  if (lines[lines.length - 1] === "") lines.pop();
  if (lines.some((l) => l.length !== 94)) reject("every record must be 94 characters");
  if (lines.length % 10 !== 0) reject(`${lines.length} records are not whole blocks of 10`);
  const records = lines.filter((l) => l !== FILLER);
  if (!lines.slice(records.length).every((l) => l === FILLER)) reject("9-filled records only after the file control");

  const parsed = nacha.from(text);
  const again = parsed.to("ach").split("\n").filter((l) => l !== "" && l !== FILLER);
  for (let i = 0; i < Math.max(again.length, records.length); i++) {
    if (again[i] !== records[i]) reject(`record ${i + 1} does not survive node-nacha's parse and format: ${JSON.stringify(records[i])} vs ${JSON.stringify(again[i])}`);
  }
  const f = parsed.data;
  if (f.file.recordSize !== "094" || f.file.blockingFactor !== "10" || f.file.formatCode !== "1") reject("file header record size, blocking factor or format code");

  const out: BankEntry[] = [];
  let count = 0;
  let hash = 0;
  let debit = 0;
  let credit = 0;
  const traces = new Set<string>();
  for (const b of f.batches) {
    let bCount = 0;
    let bHash = 0;
    let bDebit = 0;
    let bCredit = 0;
    let last = "";
    if (!["PPD", "CCD"].includes(b.entryClassCode)) reject(`SEC code ${b.entryClassCode} is not in our agreement (PPD, CCD)`);
    for (const e of b.entries) {
      const trace = String(e.traceNumber).padStart(15, "0");
      if (!trace.startsWith(b.originatingDFIIdentification)) reject(`trace ${trace} does not start with ODFI ${b.originatingDFIIdentification}`);
      if (trace <= last) reject(`trace numbers do not ascend in batch ${b.num}`);
      if (traces.has(trace)) reject(`trace ${trace} twice`);
      traces.add(trace);
      last = trace;
      const rdfi = String(e.receivingDFIIdentification).padStart(8, "0");
      const w = [3, 7, 1, 3, 7, 1, 3, 7];
      const check = (10 - ([...rdfi].reduce((s, d, i) => s + Number(d) * w[i]!, 0) % 10)) % 10;
      if (check !== e.checkDigit) reject(`check digit of ${rdfi}`);
      bCount += 1 + (e.addenda ? 1 : 0);
      bHash += e.receivingDFIIdentification;
      if (CREDIT.has(e.transactionCode)) bCredit += e.amount;
      else if (DEBIT.has(e.transactionCode)) bDebit += e.amount;
      else reject(`transaction code ${e.transactionCode}`);
      if (b.serviceClassCode === 220 && DEBIT.has(e.transactionCode)) reject("debit in a credits-only batch");
      if (b.serviceClassCode === 225 && CREDIT.has(e.transactionCode)) reject("credit in a debits-only batch");
      out.push({
        secCode: b.entryClassCode,
        transactionCode: e.transactionCode,
        routingNumber: rdfi + String(e.checkDigit),
        accountNumber: e.dfiAccount,
        amount: BigInt(e.amount),
        identificationNumber: e.identificationNumber,
        name: (e.receivingCompanyName ?? e.individualName ?? "").trim(),
        traceNumber: trace,
        effectiveDate: b.effectiveDate,
        ...(e.addenda ? { addenda: e.addenda.info } : {}),
      });
    }
    const ft = b.footer;
    if (ft.entryAndAddendaCount !== bCount) reject(`batch ${b.num} entry/addenda count ${ft.entryAndAddendaCount}, counted ${bCount}`);
    if (ft.entryHash !== bHash % 1e10) reject(`batch ${b.num} entry hash ${ft.entryHash}, computed ${bHash % 1e10}`);
    if (ft.totalDebit !== bDebit || ft.totalCredit !== bCredit) reject(`batch ${b.num} totals`);
    if (ft.companyId !== b.companyId || ft.originatingDFIIdentification !== b.originatingDFIIdentification || ft.num !== b.num) reject(`batch ${b.num} control does not match its header`);
    if (ft.serviceClassCode !== b.serviceClassCode) reject(`batch ${b.num} service class`);
    count += bCount;
    hash += bHash;
    debit += bDebit;
    credit += bCredit;
  }
  const ff = f.file.footer;
  if (ff.batchCount !== f.batches.length) reject("file batch count");
  if (ff.blockCount !== lines.length / 10) reject(`file block count ${ff.blockCount}, file has ${lines.length / 10} blocks`);
  if (ff.entryAndAddendaCount !== count) reject("file entry/addenda count");
  if (ff.entryHash !== hash % 1e10) reject("file entry hash");
  if (ff.totalDebit !== debit || ff.totalCredit !== credit) reject("file totals");
  return out;
}

// ---- what the bank sends back --------------------------------------------------------------

const a = (v: string, n: number) => v.slice(0, n).padEnd(n, " ");
const z = (v: bigint | number | string, n: number) => String(v).padStart(n, "0");

export interface BankReturn {
  readonly entry: BankEntry;
  /** R01…, or C01… for a notification of change. */
  readonly code: string;
  /** For a NOC: the corrected data field (29 characters, laid out per the C-code). */
  readonly correctedData?: string;
}

/** Writes a return or NOC file as the ODFI passes it on to the originator: each entry is addressed
 * to the original ODFI (odfiRouting), its addenda names the original trace and receiving DFI, and
 * the returning bank (bankRouting) numbers the new traces. */
export function bankWritesReturnFile(opts: { bankRouting: string; odfiRouting: string; date: string; items: readonly BankReturn[] }): string {
  const bank8 = opts.bankRouting.slice(0, 8);
  const recs: string[] = [];
  recs.push("101" + " " + opts.odfiRouting + " " + opts.bankRouting + opts.date + "0600" + "A094101" + a("CORRIDOR ODFI", 23) + a("BANK", 23) + a("", 8));
  let batchNo = 0;
  let fCount = 0;
  let fHash = 0n;
  let fDebit = 0n;
  let fCredit = 0n;
  const groups = new Map<string, BankReturn[]>();
  for (const it of opts.items) {
    const sec = it.code.startsWith("C") ? "COR" : it.entry.secCode;
    groups.set(sec, [...(groups.get(sec) ?? []), it]);
  }
  let seq = 0;
  for (const [sec, items] of groups) {
    batchNo += 1;
    recs.push("5200" + a("CORRIDOR", 16) + a("", 20) + a("1234567890", 10) + sec + a(sec === "COR" ? "NOC" : "RETURN", 10) + a("", 6) + opts.date + "   " + "1" + bank8 + z(batchNo, 7));
    let count = 0;
    let hash = 0n;
    let debit = 0n;
    let credit = 0n;
    for (const it of items) {
      seq += 1;
      const trace = bank8 + z(seq, 7);
      const e = it.entry;
      // Return of a credit (22/32) is a 21/31, of a debit (27/37) a 26/36: the same direction flag
      // kept for the totals, as the ACH operator books them.
      const code = e.transactionCode[0] + (Number(e.transactionCode[1]) <= 4 ? "1" : "6");
      const amount = it.code.startsWith("C") ? 0n : e.amount;
      recs.push("6" + code + opts.odfiRouting + a(e.accountNumber, 17) + z(amount, 10) + a(e.identificationNumber, 15) + a(e.name, 22) + "  " + "1" + trace);
      if (it.code.startsWith("C")) {
        recs.push("798" + it.code + e.traceNumber + a("", 6) + e.routingNumber.slice(0, 8) + a(it.correctedData ?? "", 29) + a("", 15) + trace);
      } else {
        recs.push("799" + it.code + e.traceNumber + a("", 6) + e.routingNumber.slice(0, 8) + a("", 44) + trace);
      }
      count += 2;
      hash += BigInt(opts.odfiRouting.slice(0, 8));
      if (code[1] === "1") credit += amount;
      else debit += amount;
    }
    recs.push("8200" + z(count, 6) + z(hash % 10_000_000_000n, 10) + z(debit, 12) + z(credit, 12) + a("1234567890", 10) + a("", 25) + bank8 + z(batchNo, 7));
    fCount += count;
    fHash += hash;
    fDebit += debit;
    fCredit += credit;
  }
  const blocks = Math.ceil((recs.length + 1) / 10);
  recs.push("9" + z(batchNo, 6) + z(blocks, 6) + z(fCount, 8) + z(fHash % 10_000_000_000n, 10) + z(fDebit, 12) + z(fCredit, 12) + a("", 39));
  while (recs.length % 10 !== 0) recs.push(FILLER);
  return recs.join("\n") + "\n";
}

/** A credit someone sent to the operator's account, as the ODFI (here the RDFI) passes it on. */
export interface IncomingCredit {
  /** The operator's account number at the bank (what the payer was told). */
  readonly accountNumber: string;
  readonly amount: bigint;
  /** The individual identification number field: where a payer puts a short reference (15). */
  readonly identification: string;
  /** The receiver's name as the payer wrote it (22). */
  readonly name: string;
  /** The originator (the payer's company) in the batch header (16). */
  readonly companyName: string;
  readonly companyId: string;
}

/**
 * Writes a file of PPD credits received for the operator's account, field by field (node-nacha is
 * not used: the file must be independent of Corridor's reader and writer). One batch per originator.
 */
export function bankWritesIncomingCreditFile(opts: { bankRouting: string; odfiRouting: string; date: string; credits: readonly IncomingCredit[]; firstTrace?: number }): string {
  const bank8 = opts.bankRouting.slice(0, 8);
  const recs: string[] = [];
  recs.push("101" + " " + opts.odfiRouting + " " + opts.bankRouting + opts.date + "0600" + "A094101" + a("CORRIDOR ODFI", 23) + a("BANK", 23) + a("", 8));
  let seq = opts.firstTrace ?? 0;
  let fCount = 0;
  let fHash = 0n;
  let fCredit = 0n;
  const batches = new Map<string, IncomingCredit[]>();
  for (const c of opts.credits) batches.set(c.companyName + c.companyId, [...(batches.get(c.companyName + c.companyId) ?? []), c]);
  let batchNo = 0;
  for (const credits of batches.values()) {
    batchNo += 1;
    const c0 = credits[0]!;
    recs.push("5220" + a(c0.companyName, 16) + a("", 20) + a(c0.companyId, 10) + "PPD" + a("PAYMENT", 10) + a("", 6) + opts.date + "   " + "1" + bank8 + z(batchNo, 7));
    let hash = 0n;
    let credit = 0n;
    for (const c of credits) {
      seq += 1;
      recs.push("622" + opts.odfiRouting + a(c.accountNumber, 17) + z(c.amount, 10) + a(c.identification, 15) + a(c.name, 22) + "  " + "0" + bank8 + z(seq, 7));
      hash += BigInt(opts.odfiRouting.slice(0, 8));
      credit += c.amount;
    }
    recs.push("8220" + z(credits.length, 6) + z(hash % 10_000_000_000n, 10) + z(0, 12) + z(credit, 12) + a(c0.companyId, 10) + a("", 25) + bank8 + z(batchNo, 7));
    fCount += credits.length;
    fHash += hash;
    fCredit += credit;
  }
  const blocks = Math.ceil((recs.length + 1) / 10);
  recs.push("9" + z(batchNo, 6) + z(blocks, 6) + z(fCount, 8) + z(fHash % 10_000_000_000n, 10) + z(0, 12) + z(fCredit, 12) + a("", 39));
  while (recs.length % 10 !== 0) recs.push(FILLER);
  return recs.join("\n") + "\n";
}

// ---- the bank's answer to an uploaded file ---------------------------------------------------

/**
 * The ODFI's acknowledgement of an uploaded file, NACHA layout: its own file header addressed back
 * to the originator (destination and origin swapped) with the uploaded file's creation date, time
 * and file ID modifier, no batches, and a file control with the totals the bank counted in its own
 * reading of the upload (bankReadsUpload, node-nacha); `totals: "zero"` writes a bare
 * acknowledgement as some banks do, `tamper` other totals.
 */
export function bankWritesAcknowledgement(uploaded: string, opts: { totals?: "counted" | "zero"; tamper?: boolean } = {}): string {
  const header = uploaded.slice(0, 94);
  const destination = header.slice(3, 13);
  const origin = header.slice(13, 23);
  const stamp = header.slice(23, 34);
  const recs = ["101" + origin + destination + stamp + "094101" + a("CORRIDOR", 23) + a("BANK ACK", 23) + a("ACK", 8)];
  let count = 0;
  let hash = 0n;
  let debit = 0n;
  let credit = 0n;
  if (opts.totals !== "zero") {
    for (const e of bankReadsUpload(uploaded)) {
      count += 1 + (e.addenda ? 1 : 0);
      hash += BigInt(e.routingNumber.slice(0, 8));
      if (DEBIT.has(e.transactionCode)) debit += e.amount;
      else credit += e.amount;
    }
  }
  if (opts.tamper) credit += 1n;
  recs.push("9" + z(0, 6) + z(1, 6) + z(count, 8) + z(hash % 10_000_000_000n, 10) + z(debit, 12) + z(credit, 12) + a("", 39));
  while (recs.length % 10 !== 0) recs.push(FILLER);
  return recs.join("\n") + "\n";
}

/**
 * The ODFI sends an uploaded file back (it refuses it): the uploaded records as they are, keeping
 * only the batches `keep` selects (all by default), with the file control recounted, and a reason in
 * the file header's reference code. Built from the upload's lines, not from Corridor's code.
 */
export function bankSendsFileBack(uploaded: string, opts: { reason?: string; keep?: (batchNumber: number) => boolean } = {}): string {
  const lines = uploaded.split(/\r?\n/).filter((l) => l !== "" && l !== FILLER);
  const out = [lines[0]!.slice(0, 86) + a(opts.reason ?? "", 8)];
  let batchCount = 0;
  let count = 0;
  let hash = 0n;
  let debit = 0n;
  let credit = 0n;
  let current: string[] = [];
  for (const l of lines.slice(1)) {
    if (l[0] === "5") current = [l];
    else if (l[0] === "6" || l[0] === "7") current.push(l);
    else if (l[0] === "8") {
      current.push(l);
      const n = Number(l.slice(87, 94));
      if (!opts.keep || opts.keep(n)) {
        out.push(...current);
        batchCount++;
        count += Number(l.slice(4, 10));
        hash += BigInt(l.slice(10, 20));
        debit += BigInt(l.slice(20, 32));
        credit += BigInt(l.slice(32, 44));
      }
    }
  }
  const blocks = Math.ceil((out.length + 1) / 10);
  out.push("9" + z(batchCount, 6) + z(blocks, 6) + z(count, 8) + z(hash % 10_000_000_000n, 10) + z(debit, 12) + z(credit, 12) + a("", 39));
  while (out.length % 10 !== 0) out.push(FILLER);
  return out.join("\n") + "\n";
}
