// Writes an outgoing NACHA file as the ODFI expects it: one file header, PPD (individuals) and
// CCD (businesses) batches of credits (payouts) and debits (pulls), batch and file controls with
// counts, entry hash and totals, and 9-filled records up to a multiple of the blocking factor.
// Amounts are bigint cents; nothing here does floating-point arithmetic.
import {
  alpha, BLOCKING_FACTOR, entryHashDigits, FILLER_RECORD, isRoutingNumber, NachaWriteError, numeric, RECORD_LENGTH,
} from "./fields.js";

export type OutgoingSecCode = "PPD" | "CCD";
export type OutgoingAccountType = "CHECKING" | "SAVINGS";

export interface OutgoingEntry {
  /** credit: money to the receiver (a payout); debit: money from the receiver (a pull). */
  readonly direction: "credit" | "debit";
  readonly accountType: OutgoingAccountType;
  /** The receiver's 9-digit routing number (its check digit is verified). */
  readonly routingNumber: string;
  readonly accountNumber: string;
  /** Cents, 1 to 9,999,999,999 (a prenote would be 0; Corridor does not send prenotes). */
  readonly amount: bigint;
  /** Individual ID number (PPD) / identification number (CCD), 15 characters: Corridor's reference. */
  readonly identificationNumber: string;
  /** Individual name (PPD) / receiving company name (CCD), cut to 22 characters. */
  readonly receiverName: string;
  readonly discretionaryData?: string;
  /** The 7-digit sequence of the trace number (the ODFI's 8-digit routing comes first). */
  readonly traceSequence: number;
  /** Payment-related information for one type 05 addenda record (80 characters at most). */
  readonly paymentRelatedInformation?: string;
  /**
   * A return entry (as RDFI: a credit the operator's account received goes back; rail contract 1.3
   * RETURN): direction credit, transaction code 21 (checking) / 31 (savings), one type 99 addenda
   * with the reason code, the original entry's trace number and the original RDFI's routing (8
   * digits). The entry's routing and account are the original entry's, the amount the original's.
   */
  readonly returnOf?: {
    /** R01–R85 as NACHA lists them (R23, R17, R03 for a refused credit). */
    readonly reasonCode: string;
    /** The original entry's 15-digit trace number. */
    readonly originalTraceNumber: string;
    /** The original entry's receiving DFI identification: the first 8 digits of its routing number. */
    readonly originalRdfi: string;
    /** Addenda information (44 characters at most). */
    readonly information?: string;
  };
}

export interface OutgoingBatch {
  readonly secCode: OutgoingSecCode;
  readonly companyName: string;
  readonly companyDiscretionaryData?: string;
  /** The originator's company identification as the ODFI assigned it (10 characters, usually "1" + EIN). */
  readonly companyIdentification: string;
  /** Shown on the receiver's statement, e.g. "PAYOUT" or "PAYMENT" (10 characters). */
  readonly companyEntryDescription: string;
  readonly companyDescriptiveDate?: string;
  /** YYMMDD: the banking day the originator intends the entries to settle. */
  readonly effectiveEntryDate: string;
  readonly batchNumber: number;
  readonly entries: readonly OutgoingEntry[];
}

export interface OutgoingFile {
  /** The ODFI's (or its processor's) 9-digit routing number, as the bank asks for it. */
  readonly immediateDestination: string;
  readonly immediateDestinationName: string;
  /** 10 characters: the originator as the bank knows it (a routing number with a leading space, or "1" + EIN). */
  readonly immediateOrigin: string;
  readonly immediateOriginName: string;
  /** The ODFI's 9-digit routing number: its first 8 digits open every trace number and batch. */
  readonly odfiRouting: string;
  readonly creationDate: string; // YYMMDD
  readonly creationTime: string; // HHMM
  /** A–Z or 0–9: tells apart files sent to the same destination on the same day. */
  readonly fileIdModifier: string;
  readonly referenceCode?: string;
  readonly batches: readonly OutgoingBatch[];
  readonly lineEnding?: "\n" | "\r\n";
}

export interface WrittenFile {
  readonly text: string;
  readonly entryCount: number;
  readonly totalDebit: bigint;
  readonly totalCredit: bigint;
  /** Trace number of each entry, in file order. */
  readonly traceNumbers: readonly string[];
}

const MAX_AMOUNT = 9_999_999_999n;

function yymmdd(field: string, v: string): string {
  if (!/^[0-9]{6}$/.test(v)) throw new NachaWriteError(field, "must be YYMMDD");
  const mm = Number(v.slice(2, 4));
  const dd = Number(v.slice(4, 6));
  if (mm < 1 || mm > 12 || dd < 1 || dd > 31) throw new NachaWriteError(field, `${v} is not a date`);
  return v;
}

function transactionCode(e: OutgoingEntry): string {
  const base = e.accountType === "CHECKING" ? 2 : 3;
  if (e.returnOf) return `${base}1`; // the return of a credit (22/32)
  return `${base}${e.direction === "credit" ? 2 : 7}`;
}

/** Writes the file; throws NachaWriteError naming the field for anything that cannot be written. */
export function writeNachaFile(file: OutgoingFile): WrittenFile {
  const records: string[] = [];
  if (!isRoutingNumber(file.immediateDestination)) throw new NachaWriteError("immediateDestination", "must be a 9-digit routing number with a valid check digit");
  if (!isRoutingNumber(file.odfiRouting)) throw new NachaWriteError("odfiRouting", "must be a 9-digit routing number with a valid check digit");
  if (!/^[A-Z0-9]$/.test(file.fileIdModifier)) throw new NachaWriteError("fileIdModifier", "must be one character A-Z or 0-9");
  if (!/^([01][0-9]|2[0-3])[0-5][0-9]$/.test(file.creationTime)) throw new NachaWriteError("creationTime", "must be HHMM");
  const origin = file.immediateOrigin.length === 9 ? ` ${file.immediateOrigin}` : file.immediateOrigin;
  if (!/^[ 0-9A-Za-z][0-9A-Za-z]{9}$/.test(origin)) throw new NachaWriteError("immediateOrigin", "must be 10 characters (or a 9-digit routing number)");
  if (file.batches.length === 0) throw new NachaWriteError("batches", "a file needs at least one batch");

  records.push(
    "1" + "01" + ` ${file.immediateDestination}` + origin + yymmdd("creationDate", file.creationDate) + file.creationTime +
      file.fileIdModifier + "094" + "10" + "1" +
      alpha("immediateDestinationName", file.immediateDestinationName, 23, { truncate: true, upper: true }) +
      alpha("immediateOriginName", file.immediateOriginName, 23, { truncate: true, upper: true }) +
      alpha("referenceCode", file.referenceCode ?? "", 8),
  );

  const odfi8 = file.odfiRouting.slice(0, 8);
  const traceNumbers: string[] = [];
  const seenTraces = new Set<string>();
  const seenBatchNumbers = new Set<number>();
  let fileEntryAddenda = 0;
  let fileHash = 0n;
  let fileDebit = 0n;
  let fileCredit = 0n;

  for (const [bi, batch] of file.batches.entries()) {
    const where = `batches[${bi}]`;
    if (batch.entries.length === 0) throw new NachaWriteError(`${where}.entries`, "a batch needs at least one entry");
    if (!Number.isInteger(batch.batchNumber) || batch.batchNumber < 1 || batch.batchNumber > 9_999_999) throw new NachaWriteError(`${where}.batchNumber`, "must be 1 to 9999999");
    if (seenBatchNumbers.has(batch.batchNumber)) throw new NachaWriteError(`${where}.batchNumber`, `batch number ${batch.batchNumber} appears twice`);
    if (bi > 0 && batch.batchNumber <= file.batches[bi - 1]!.batchNumber) throw new NachaWriteError(`${where}.batchNumber`, "batch numbers must ascend");
    seenBatchNumbers.add(batch.batchNumber);
    const hasCredit = batch.entries.some((e) => e.direction === "credit");
    const hasDebit = batch.entries.some((e) => e.direction === "debit");
    const serviceClass = hasCredit && hasDebit ? "200" : hasCredit ? "220" : "225";
    const companyId = alpha(`${where}.companyIdentification`, batch.companyIdentification, 10);
    const batchNo = numeric(`${where}.batchNumber`, batch.batchNumber, 7);
    records.push(
      "5" + serviceClass +
        alpha(`${where}.companyName`, batch.companyName, 16, { truncate: true, upper: true }) +
        alpha(`${where}.companyDiscretionaryData`, batch.companyDiscretionaryData ?? "", 20, { truncate: true }) +
        companyId + batch.secCode +
        alpha(`${where}.companyEntryDescription`, batch.companyEntryDescription, 10, { truncate: true, upper: true }) +
        alpha(`${where}.companyDescriptiveDate`, batch.companyDescriptiveDate ?? "", 6, { truncate: true }) +
        yymmdd(`${where}.effectiveEntryDate`, batch.effectiveEntryDate) +
        "   " + // settlement date: the ACH operator fills it
        "1" + odfi8 + batchNo,
    );
    let count = 0;
    let hash = 0n;
    let debit = 0n;
    let credit = 0n;
    let lastSeq = -1;
    for (const [ei, e] of batch.entries.entries()) {
      const ew = `${where}.entries[${ei}]`;
      if (!isRoutingNumber(e.routingNumber)) throw new NachaWriteError(`${ew}.routingNumber`, "must be a 9-digit routing number with a valid check digit");
      if (!/^[0-9A-Za-z -]{1,17}$/.test(e.accountNumber) || e.accountNumber.trim() === "") throw new NachaWriteError(`${ew}.accountNumber`, "must be 1-17 letters, digits, spaces or hyphens");
      if (e.amount <= 0n || e.amount > MAX_AMOUNT) throw new NachaWriteError(`${ew}.amount`, "must be 1 to 9999999999 cents");
      if (!Number.isInteger(e.traceSequence) || e.traceSequence < 0 || e.traceSequence > 9_999_999) throw new NachaWriteError(`${ew}.traceSequence`, "must be 0 to 9999999");
      if (e.traceSequence <= lastSeq) throw new NachaWriteError(`${ew}.traceSequence`, "trace numbers must ascend within a batch");
      lastSeq = e.traceSequence;
      const trace = odfi8 + numeric(`${ew}.traceSequence`, e.traceSequence, 7);
      if (seenTraces.has(trace)) throw new NachaWriteError(`${ew}.traceSequence`, `trace number ${trace} appears twice in the file`);
      seenTraces.add(trace);
      traceNumbers.push(trace);
      if (e.returnOf) {
        if (e.direction !== "credit") throw new NachaWriteError(`${ew}.direction`, "a return entry returns a credit (transaction code 21/31)");
        if (e.paymentRelatedInformation !== undefined) throw new NachaWriteError(`${ew}.paymentRelatedInformation`, "a return entry carries its type 99 addenda only");
        if (!/^R[0-9]{2}$/.test(e.returnOf.reasonCode)) throw new NachaWriteError(`${ew}.returnOf.reasonCode`, "must be R followed by two digits");
        if (!/^[0-9]{15}$/.test(e.returnOf.originalTraceNumber)) throw new NachaWriteError(`${ew}.returnOf.originalTraceNumber`, "must be 15 digits");
        if (!/^[0-9]{8}$/.test(e.returnOf.originalRdfi)) throw new NachaWriteError(`${ew}.returnOf.originalRdfi`, "must be 8 digits");
      }
      const addenda = e.paymentRelatedInformation !== undefined || e.returnOf !== undefined;
      records.push(
        "6" + transactionCode(e) + e.routingNumber.slice(0, 8) + e.routingNumber[8] +
          alpha(`${ew}.accountNumber`, e.accountNumber, 17) +
          numeric(`${ew}.amount`, e.amount, 10) +
          alpha(`${ew}.identificationNumber`, e.identificationNumber, 15) +
          alpha(`${ew}.receiverName`, e.receiverName, 22, { truncate: true, upper: true }) +
          alpha(`${ew}.discretionaryData`, e.discretionaryData ?? "", 2) +
          (addenda ? "1" : "0") + trace,
      );
      count += 1;
      if (e.returnOf) {
        records.push(
          "7" + "99" + e.returnOf.reasonCode + e.returnOf.originalTraceNumber + " ".repeat(6) + e.returnOf.originalRdfi +
            alpha(`${ew}.returnOf.information`, e.returnOf.information ?? "", 44, { truncate: true }) + trace,
        );
        count += 1;
      } else if (addenda) {
        records.push("7" + "05" + alpha(`${ew}.paymentRelatedInformation`, e.paymentRelatedInformation!, 80) + "0001" + trace.slice(8));
        count += 1;
      }
      hash += BigInt(e.routingNumber.slice(0, 8));
      if (e.direction === "credit") credit += e.amount;
      else debit += e.amount;
    }
    records.push(
      "8" + serviceClass + numeric("entryAddendaCount", count, 6) + entryHashDigits(hash) +
        numeric("totalDebit", debit, 12) + numeric("totalCredit", credit, 12) + companyId +
        " ".repeat(19) + " ".repeat(6) + odfi8 + batchNo,
    );
    fileEntryAddenda += count;
    fileHash += hash;
    fileDebit += debit;
    fileCredit += credit;
  }

  const recordCount = records.length + 1;
  const blocks = Math.ceil(recordCount / BLOCKING_FACTOR);
  records.push(
    "9" + numeric("batchCount", file.batches.length, 6) + numeric("blockCount", blocks, 6) +
      numeric("entryAddendaCount", fileEntryAddenda, 8) + entryHashDigits(fileHash) +
      numeric("totalDebit", fileDebit, 12) + numeric("totalCredit", fileCredit, 12) + " ".repeat(39),
  );
  while (records.length % BLOCKING_FACTOR !== 0) records.push(FILLER_RECORD);
  for (const rec of records) {
    if (rec.length !== RECORD_LENGTH) throw new Error(`internal: a written record is ${rec.length} characters: ${rec}`);
  }
  const eol = file.lineEnding ?? "\n";
  return {
    text: records.join(eol) + eol,
    entryCount: traceNumbers.length,
    totalDebit: fileDebit,
    totalCredit: fileCredit,
    traceNumbers,
  };
}
