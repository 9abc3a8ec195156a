// A reader of BAI2 (Cash Management Balance Reporting Specification, version 2) balance and
// transaction files, as US banks send end-of-day statements. No maintained npm package reads
// BAI2 (docs/connectors.md, "BAI2"), so this is Corridor's own, kept strict: it reads a file
// record by record (one logical record in memory), verifies every trailer's control total and
// record count against what it read, and refuses anything else naming the line and the fault.
//
// Records (fields separated by commas, a record ended by "/"; an 88 record continues the one
// before it):
//   01 file header      sender, receiver, creation date/time, file id, ..., version 2
//   02 group header     ultimate receiver, originator, status, as-of date/time, currency, modifier
//   03 account          account number, currency, then (type code, amount, item count, funds type)*
//   16 transaction      type code, amount, funds type, bank reference, customer reference, text
//   49 account trailer  control total (sum of the 03's and 16s' amounts), records (03..49)
//   98 group trailer    control total (sum of its 49s), accounts, records (02..98)
//   99 file trailer     control total (sum of its 98s), groups, records (01..99)
// Amounts are integers in the currency's minor units (implied decimals), signed on 03 records.

export class Bai2FormatError extends Error {
  constructor(
    message: string,
    readonly line?: number,
  ) {
    super(line ? `line ${line}: ${message}` : message);
    this.name = "Bai2FormatError";
  }
}

export interface Bai2Summary {
  /** 010 opening ledger, 015 closing ledger, 040 opening available, 400 total debits, ... */
  typeCode: string;
  amount: bigint | undefined;
  itemCount: number | undefined;
  fundsType: string;
}

export interface Bai2Transaction {
  line: number;
  /** 1xx–3xx: credits; 4xx–6xx: debits; 890: information only. */
  typeCode: string;
  direction: "CREDIT" | "DEBIT" | "INFO";
  amount: bigint;
  fundsType: string;
  /** Value date of a V funds type, YYYY-MM-DD. */
  valueDate?: string;
  bankReference: string;
  customerReference: string;
  text: string;
}

export interface Bai2Account {
  line: number;
  accountNumber: string;
  currency: string;
  summaries: Bai2Summary[];
  transactions: Bai2Transaction[];
}

export interface Bai2Group {
  ultimateReceiver: string;
  originator: string;
  /** 1 update, 2 deletion, 3 correction, 4 test only. */
  status: string;
  /** YYYY-MM-DD. */
  asOfDate: string;
  asOfTime: string;
  currency: string;
  /** 1 interim previous-day, 2 final previous-day, 3 interim same-day, 4 final same-day. */
  asOfDateModifier: string;
  accounts: Bai2Account[];
}

export interface Bai2File {
  sender: string;
  receiver: string;
  /** YYYY-MM-DD. */
  creationDate: string;
  creationTime: string;
  fileId: string;
  groups: Bai2Group[];
}

const RECORD_CODES = new Set(["01", "02", "03", "16", "49", "88", "98", "99"]);
const AMOUNT = /^[+-]?\d{1,18}$/;
const TYPE_CODE = /^\d{3}$/;
const ASCII = /^[\x20-\x7e]*$/;

function date(v: string, line: number, what: string): string {
  if (!/^\d{6}$/.test(v)) throw new Bai2FormatError(`${what} ${JSON.stringify(v)} is not YYMMDD`, line);
  const [yy, mm, dd] = [v.slice(0, 2), v.slice(2, 4), v.slice(4, 6)];
  const iso = `20${yy}-${mm}-${dd}`;
  const d = new Date(`${iso}T00:00:00Z`);
  if (Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== iso) throw new Bai2FormatError(`${what} ${v} is not a calendar date`, line);
  return iso;
}

function amount(v: string, line: number, what: string, signed = false): bigint {
  if (!AMOUNT.test(v) || (!signed && /^[+-]/.test(v))) throw new Bai2FormatError(`${what} ${JSON.stringify(v)} is not ${signed ? "a signed" : "an unsigned"} whole number of minor units`, line);
  return BigInt(v);
}

function count(v: string, line: number, what: string): number {
  if (!/^\d{1,9}$/.test(v)) throw new Bai2FormatError(`${what} ${JSON.stringify(v)} is not a count`, line);
  return Number(v);
}

/** The direction a detail type code gives (BAI2 §: 100–399 credits, 400–699 debits, 890 information). */
export function directionOf(typeCode: string): Bai2Transaction["direction"] | undefined {
  const n = Number(typeCode);
  if (n >= 100 && n <= 399) return "CREDIT";
  if (n >= 400 && n <= 699) return "DEBIT";
  if (n >= 900 && n <= 999) return undefined; // bank-specific: the file says what it means elsewhere
  if (n === 890) return "INFO";
  return undefined;
}

/**
 * The funds-type fields after an amount: Z/0/1/2/blank alone, V with a value date and time, S
 * with three amounts, D with a count and that many (days, amount) pairs. Returns the funds type,
 * a value date, and how many fields it took.
 */
function fundsType(fields: string[], at: number, line: number): { type: string; valueDate?: string; used: number } {
  const t = fields[at] ?? "";
  switch (t) {
    case "":
    case "Z":
    case "0":
    case "1":
    case "2":
      return { type: t || "Z", used: 1 };
    case "V":
      return { type: t, valueDate: date(fields[at + 1] ?? "", line, "value date"), used: 3 };
    case "S":
      for (let i = 1; i <= 3; i++) if (fields[at + i]) amount(fields[at + i]!, line, "distributed availability amount", true);
      return { type: t, used: 4 };
    case "D": {
      const n = count(fields[at + 1] ?? "", line, "number of distributions");
      for (let i = 0; i < n; i++) {
        count(fields[at + 2 + 2 * i] ?? "", line, "availability days");
        amount(fields[at + 3 + 2 * i] ?? "", line, "distributed amount", true);
      }
      return { type: t, used: 2 + 2 * n };
    }
    default:
      throw new Bai2FormatError(`funds type ${JSON.stringify(t)} is not one of Z, 0, 1, 2, V, S, D`, line);
  }
}

/** Splits a non-16 logical record into fields: without its ending "/", by commas. */
function fieldsOf(record: string, line: number): string[] {
  const body = record.replace(/\s+$/, "");
  if (!body.endsWith("/")) throw new Bai2FormatError(`record ${body.slice(0, 2)} does not end with "/"`, line);
  return body.slice(0, -1).split(",");
}

interface Logical {
  text: string;
  line: number;
  /** Physical records it was made of (itself and its 88s). */
  physical: number;
}

/** Physical lines (LF or CRLF; trailing blanks of fixed-length records dropped) to logical records. */
function* logicalRecords(lines: Iterable<string>): Generator<Logical> {
  let pending: Logical | undefined;
  let n = 0;
  for (const raw of lines) {
    n++;
    const line = raw.replace(/\r$/, "").replace(/\s+$/, "");
    if (line === "") continue;
    if (!ASCII.test(line)) throw new Bai2FormatError("contains a byte that is not printable ASCII", n);
    const code = line.slice(0, 2);
    if (!RECORD_CODES.has(code) || line[2] !== ",") throw new Bai2FormatError(`${JSON.stringify(line.slice(0, 3))} is not a BAI2 record (01, 02, 03, 16, 49, 88, 98, 99)`, n);
    if (code === "88") {
      if (!pending) throw new Bai2FormatError("a continuation (88) with no record before it", n);
      // The record continued ended without its "/" (or, for a 16's text, where the line ended).
      const before = pending.text.endsWith("/") && !pending.text.startsWith("16,") ? pending.text.slice(0, -1) : pending.text;
      pending = { text: `${before},${line.slice(3)}`, line: pending.line, physical: pending.physical + 1 };
      continue;
    }
    if (pending) yield pending;
    pending = { text: line, line: n, physical: 1 };
  }
  if (pending) yield pending;
}

/**
 * Reads a BAI2 file. Refuses (Bai2FormatError, naming the line) anything out of order, any
 * malformed field, an unknown detail type code, and every trailer whose control total or count
 * disagrees with the records it closes.
 */
export function readBai2(content: string | Buffer): Bai2File {
  const text = typeof content === "string" ? content : content.toString("latin1");
  let file: Bai2File | undefined;
  let group: Bai2Group | undefined;
  let account: Bai2Account | undefined;
  let ended = false;
  // Running control totals and record counts of the open account, group and file.
  let accountTotal = 0n;
  let accountRecords = 0;
  let groupTotal = 0n;
  let groupRecords = 0;
  let groupAccounts = 0;
  let fileTotal = 0n;
  let fileRecords = 0;
  let fileGroups = 0;

  for (const r of logicalRecords(text.split("\n"))) {
    const code = r.text.slice(0, 2);
    if (ended) throw new Bai2FormatError("a record after the file trailer (99)", r.line);
    fileRecords += r.physical;
    if (group) groupRecords += r.physical;
    if (account) accountRecords += r.physical;
    switch (code) {
      case "01": {
        if (file) throw new Bai2FormatError("a second file header (01)", r.line);
        const f = fieldsOf(r.text, r.line);
        if (f[8] !== "2") throw new Bai2FormatError(`version ${JSON.stringify(f[8] ?? "")} is not BAI version 2`, r.line);
        if (!f[1] || !f[2] || !f[5]) throw new Bai2FormatError("the file header names no sender, receiver or file id", r.line);
        file = { sender: f[1], receiver: f[2], creationDate: date(f[3] ?? "", r.line, "creation date"), creationTime: f[4] ?? "", fileId: f[5], groups: [] };
        break;
      }
      case "02": {
        if (!file) throw new Bai2FormatError("a group header (02) before the file header (01)", r.line);
        if (group) throw new Bai2FormatError("a group header (02) inside an open group (no 98 before it)", r.line);
        const f = fieldsOf(r.text, r.line);
        if (!/^[1-4]$/.test(f[3] ?? "")) throw new Bai2FormatError(`group status ${JSON.stringify(f[3] ?? "")} is not 1–4`, r.line);
        group = {
          ultimateReceiver: f[1] ?? "",
          originator: f[2] ?? "",
          status: f[3]!,
          asOfDate: date(f[4] ?? "", r.line, "as-of date"),
          asOfTime: f[5] ?? "",
          currency: f[6] || "USD",
          asOfDateModifier: f[7] ?? "",
          accounts: [],
        };
        groupTotal = 0n;
        groupRecords = r.physical;
        groupAccounts = 0;
        break;
      }
      case "03": {
        if (!group) throw new Bai2FormatError("an account (03) outside a group", r.line);
        if (account) throw new Bai2FormatError("an account (03) inside an open account (no 49 before it)", r.line);
        const f = fieldsOf(r.text, r.line);
        if (!f[1]) throw new Bai2FormatError("an account record with no account number", r.line);
        account = { line: r.line, accountNumber: f[1], currency: f[2] || group.currency, summaries: [], transactions: [] };
        accountTotal = 0n;
        accountRecords = r.physical;
        let i = 3;
        while (i < f.length && !(i === f.length - 1 && f[i] === "")) {
          const typeCode = f[i] ?? "";
          if (!TYPE_CODE.test(typeCode)) throw new Bai2FormatError(`account summary type code ${JSON.stringify(typeCode)} is not three digits`, r.line);
          const value = f[i + 1] ? amount(f[i + 1]!, r.line, `amount of type ${typeCode}`, true) : undefined;
          const items = f[i + 2] ? count(f[i + 2]!, r.line, `item count of type ${typeCode}`) : undefined;
          const funds = fundsType(f, i + 3, r.line);
          if (value !== undefined) accountTotal += value;
          account.summaries.push({ typeCode, amount: value, itemCount: items, fundsType: funds.type });
          i += 3 + funds.used;
        }
        break;
      }
      case "16": {
        if (!account) throw new Bai2FormatError("a transaction detail (16) outside an account", r.line);
        // The text field is the last and may hold commas and slashes: take the fields before it one by one.
        const f = r.text.split(",");
        const typeCode = f[1] ?? "";
        if (!TYPE_CODE.test(typeCode)) throw new Bai2FormatError(`transaction type code ${JSON.stringify(typeCode)} is not three digits`, r.line);
        const direction = directionOf(typeCode);
        if (!direction) throw new Bai2FormatError(`transaction type code ${typeCode} is neither a credit (100–399), a debit (400–699) nor information (890)`, r.line);
        const value = amount(f[2] ?? "", r.line, "transaction amount");
        const funds = fundsType(f, 3, r.line);
        const at = 3 + funds.used;
        const clean = (v: string | undefined) => (v ?? "").replace(/\/$/, "");
        const bankReference = clean(f[at]);
        const customerReference = clean(f[at + 1]);
        const rest = f.slice(at + 2).join(",");
        accountTotal += value;
        account.transactions.push({ line: r.line, typeCode, direction, amount: value, fundsType: funds.type, valueDate: funds.valueDate, bankReference, customerReference, text: rest === "/" ? "" : rest.replace(/\/$/, "").trim() });
        break;
      }
      case "49": {
        if (!account || !group) throw new Bai2FormatError("an account trailer (49) with no account open", r.line);
        const f = fieldsOf(r.text, r.line);
        const total = amount(f[1] ?? "", r.line, "account control total", true);
        const records = count(f[2] ?? "", r.line, "account record count");
        if (total !== accountTotal) throw new Bai2FormatError(`account ${account.accountNumber}: control total ${total} but its records add up to ${accountTotal}`, r.line);
        if (records !== accountRecords) throw new Bai2FormatError(`account ${account.accountNumber}: trailer counts ${records} records, the account has ${accountRecords}`, r.line);
        group.accounts.push(account);
        groupTotal += total;
        groupAccounts++;
        account = undefined;
        break;
      }
      case "98": {
        if (!group || !file) throw new Bai2FormatError("a group trailer (98) with no group open", r.line);
        if (account) throw new Bai2FormatError(`a group trailer (98) while account ${account.accountNumber} is open (no 49)`, r.line);
        const f = fieldsOf(r.text, r.line);
        const total = amount(f[1] ?? "", r.line, "group control total", true);
        const accounts = count(f[2] ?? "", r.line, "group account count");
        const records = count(f[3] ?? "", r.line, "group record count");
        if (total !== groupTotal) throw new Bai2FormatError(`group control total ${total} but its accounts add up to ${groupTotal}`, r.line);
        if (accounts !== groupAccounts) throw new Bai2FormatError(`group trailer counts ${accounts} accounts, the group has ${groupAccounts}`, r.line);
        if (records !== groupRecords) throw new Bai2FormatError(`group trailer counts ${records} records, the group has ${groupRecords}`, r.line);
        file.groups.push(group);
        fileTotal += total;
        fileGroups++;
        group = undefined;
        break;
      }
      case "99": {
        if (!file) throw new Bai2FormatError("a file trailer (99) with no file header", r.line);
        if (group) throw new Bai2FormatError("a file trailer (99) while a group is open (no 98)", r.line);
        const f = fieldsOf(r.text, r.line);
        const total = amount(f[1] ?? "", r.line, "file control total", true);
        const groups = count(f[2] ?? "", r.line, "file group count");
        const records = count(f[3] ?? "", r.line, "file record count");
        if (total !== fileTotal) throw new Bai2FormatError(`file control total ${total} but its groups add up to ${fileTotal}`, r.line);
        if (groups !== fileGroups) throw new Bai2FormatError(`file trailer counts ${groups} groups, the file has ${fileGroups}`, r.line);
        if (records !== fileRecords) throw new Bai2FormatError(`file trailer counts ${records} records, the file has ${fileRecords}`, r.line);
        ended = true;
        break;
      }
      default:
        throw new Bai2FormatError(`unexpected record ${code}`, r.line);
    }
  }
  if (!file) throw new Bai2FormatError("no file header (01): not a BAI2 file");
  if (!ended) throw new Bai2FormatError("the file ends without its trailer (99): cut short?");
  return file;
}

/** True when the content starts like a BAI2 file (a NACHA file starts with "101"). */
export const looksLikeBai2 = (content: Buffer | string) => (typeof content === "string" ? content : content.subarray(0, 3).toString("latin1")).startsWith("01,");
