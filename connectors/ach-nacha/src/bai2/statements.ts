import type { StatementEntry, StatementReport } from "@corridor/connector";
import { Bai2FormatError, type Bai2File } from "./reader.js";

const TRACE = /\b\d{15}\b/;
const OUR_REFERENCE = /\bTXN-[A-Z0-9]{6,20}\b/;

export interface Bai2Statements {
  statements: StatementReport[];
  /** Groups and accounts not reported, and why (interim or test data). */
  skipped: string[];
}

/**
 * The end-of-day statements of a BAI2 file, as the rail contract reports them: one per account of
 * each group that is a final report (as-of-date modifier 2 or 4, or none) and an update or
 * correction (status 1 or 3); interim and test groups are not the day's statement. Opening and
 * closing booked balances are the account's 010 (opening ledger) and 015 (closing ledger); every
 * credit and debit detail (16) is an entry, its bank reference the entry id, and an ACH trace
 * number (15 digits) or our TXN reference found in its customer reference or text is carried.
 */
export function bai2Statements(f: Bai2File, o: { sourceFile: string; timeZone: string }): Bai2Statements {
  const statements: StatementReport[] = [];
  const skipped: string[] = [];
  for (const g of f.groups) {
    if (g.status === "2" || g.status === "4") {
      skipped.push(`group as of ${g.asOfDate}: status ${g.status} (${g.status === "2" ? "deletion" : "test only"})`);
      continue;
    }
    if (g.asOfDateModifier === "1" || g.asOfDateModifier === "3") {
      skipped.push(`group as of ${g.asOfDate}: interim report (modifier ${g.asOfDateModifier})`);
      continue;
    }
    for (const a of g.accounts) {
      const summary = (code: string) => a.summaries.find((s) => s.typeCode === code)?.amount;
      const opening = summary("010");
      const closing = summary("015");
      if (opening === undefined || closing === undefined) {
        throw new Bai2FormatError(`account ${a.accountNumber} as of ${g.asOfDate} has no ${opening === undefined ? "opening ledger (010)" : "closing ledger (015)"} amount`, a.line);
      }
      const statementId = `${f.sender}:${f.fileId}:${f.creationDate}:${g.asOfDate}:${a.accountNumber}`;
      const used = new Set<string>();
      const entries: StatementEntry[] = [];
      for (const t of a.transactions) {
        if (t.direction === "INFO" || t.amount === 0n) continue;
        const id = t.bankReference && !used.has(t.bankReference) ? t.bankReference : `${statementId}#${t.line}`;
        used.add(id);
        const haystack = `${t.customerReference} ${t.text}`;
        entries.push({
          bankEntryId: id,
          direction: t.direction,
          amount: t.amount,
          valueDate: t.valueDate ?? g.asOfDate,
          bookingDate: g.asOfDate,
          traceNumber: TRACE.exec(haystack)?.[0],
          reference: OUR_REFERENCE.exec(haystack)?.[0],
          description: `${t.typeCode}${t.text ? `; ${t.text}` : ""}`.slice(0, 500),
        });
      }
      statements.push({ account: a.accountNumber, statementId, statementDate: g.asOfDate, timeZone: o.timeZone, currency: a.currency, openingBooked: opening, closingBooked: closing, entries, sourceFile: o.sourceFile });
    }
  }
  return { statements, skipped };
}
