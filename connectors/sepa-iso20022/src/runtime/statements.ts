import type { StatementEntry, StatementReport } from "@corridor/connector";
import type { AccountReport, Balance, BankToCustomerDocument, Entry, EntryDetail } from "../iso20022/camt.js";
import { Iso20022Error } from "../iso20022/errors.js";

/** Our reconciliation reference as the ledger writes it (TXN- and ten letters or digits), where a bank echoes it in the remittance. */
const OUR_REFERENCE = /\bTXN-[A-Z0-9]{6,20}\b/;
/** What a missing end-to-end id is sent as. */
const NOT_PROVIDED = "NOTPROVIDED";

const signed = (b: Balance) => (b.direction === "DEBIT" ? -b.amount : b.amount);
const day = (v: string | undefined) => (v && /^\d{4}-\d{2}-\d{2}/.test(v) ? v.slice(0, 10) : undefined);

function balance(r: AccountReport, types: string[], what: string): Balance {
  for (const t of types) {
    const b = r.balances.find((x) => x.type === t);
    if (b) return b;
  }
  throw new Iso20022Error(`statement ${r.id} has no ${what} balance (${types.join(" or ")})`);
}

function referenceOf(d: EntryDetail | undefined, e: Entry): string | undefined {
  for (const text of [...(d?.remittance.unstructured ?? []), ...(d?.remittance.references ?? []), e.additionalInfo ?? ""]) {
    const m = OUR_REFERENCE.exec(text);
    if (m) return m[0];
  }
  return undefined;
}

function describe(e: Entry, d: EntryDetail | undefined): string {
  const code = e.bankTransactionCode;
  const parts = [
    code && [code.domain, code.family, code.subFamily].filter(Boolean).join("/"),
    code?.proprietary,
    e.reversal ? "reversal" : undefined,
    d?.remittance.unstructured.join(" "),
    e.additionalInfo,
  ];
  return parts.filter((p) => p && p.length).join("; ").slice(0, 500);
}

/**
 * The statements of a camt.053 document, one per account report (Stmt), as the rail contract
 * reports them: the opening (OPBD, else PRCD) and closing (CLBD) booked balances signed (a debit
 * balance is negative), the statement's day (the closing balance's date, else the end of its
 * period, else its creation), and its booked entries (status BOOK; pending and information-only
 * entries are not money that moved). A batch-booked entry whose transaction details carry amounts
 * adding up to the entry's is reported detail by detail (one pain.001 file is often one debit on
 * the statement); otherwise the entry is reported whole. Bank entry ids are the bank's
 * (AcctSvcrRef, NtryRef), else the entry's position on the statement.
 */
export function statementsOf(doc: BankToCustomerDocument, o: { sourceFile: string; timeZone: string }): StatementReport[] {
  if (doc.message !== "camt.053") throw new Iso20022Error(`expected a camt.053 statement, got ${doc.message}`);
  return doc.reports.map((r) => {
    const account = r.account.iban ?? r.account.other;
    if (!account) throw new Iso20022Error(`statement ${r.id} names no account`);
    const opening = balance(r, ["OPBD", "PRCD"], "opening booked");
    const closing = balance(r, ["CLBD"], "closing booked");
    const currency = r.account.currency ?? closing.currency;
    const statementDate = day(closing.date) ?? day(r.toDateTime) ?? day(r.createdAt) ?? day(doc.createdAt);
    if (!statementDate) throw new Iso20022Error(`statement ${r.id} has no date`);
    const entries: StatementEntry[] = [];
    const used = new Set<string>();
    const uniqueId = (preferred: string | undefined, fallback: string) => {
      const id = preferred && !used.has(preferred) ? preferred : fallback;
      used.add(id);
      return id;
    };
    r.entries.forEach((e, i) => {
      if (e.status !== "BOOK") return;
      if (e.currency !== currency) throw new Iso20022Error(`statement ${r.id} entry ${i + 1} is in ${e.currency}, the account in ${currency}`);
      const entryId = e.accountServicerReference ?? e.reference;
      const base = { valueDate: day(e.valueDate), bookingDate: day(e.bookingDate) };
      const split = e.details.length > 1 && e.details.every((d) => d.amount !== undefined && d.amount > 0n && (d.currency ?? currency) === currency) && e.details.reduce((s, d) => s + d.amount!, 0n) === e.amount;
      const parts: { detail: EntryDetail | undefined; amount: bigint; id: string | undefined; fallback: string }[] = split
        ? e.details.map((d, j) => ({ detail: d, amount: d.amount!, id: d.accountServicerReference && d.accountServicerReference !== entryId ? d.accountServicerReference : undefined, fallback: `${entryId ?? `${r.id}#${i + 1}`}/${j + 1}` }))
        : [{ detail: e.details.length === 1 ? e.details[0] : undefined, amount: e.amount, id: entryId, fallback: `${r.id}#${i + 1}` }];
      for (const p of parts) {
        const e2e = p.detail?.endToEndId && p.detail.endToEndId !== NOT_PROVIDED ? p.detail.endToEndId : undefined;
        entries.push({
          bankEntryId: uniqueId(p.id, p.fallback),
          direction: e.direction,
          amount: p.amount,
          ...base,
          endToEndId: e2e,
          reference: referenceOf(p.detail, e),
          description: describe(e, p.detail),
        });
      }
    });
    return {
      account,
      statementId: r.id,
      statementDate,
      timeZone: o.timeZone,
      currency,
      openingBooked: signed(opening),
      closingBooked: signed(closing),
      entries,
      sourceFile: o.sourceFile,
    };
  });
}
