import { SANDBOX_CONNECTOR } from "@corridor/connector";
import { errors, newId, type Clock, type Logger } from "@corridor/kit";

/**
 * End-of-day reconciliation (issue 24 item 5, docs/connectors.md "Statements and reconciliation"):
 * a connector reports the statement its bank sent for an account and a day; the ledger matches
 * every booked entry against the transactions it routed to that connector, and every transaction
 * it settled that day against the entries, and stores a report with its breaks. A clean day is a
 * report with status CLEAN; a day with breaks is logged at warn and announced to operators
 * (corridor.reconciliations.v1). The operator resolves breaks one by one with a note.
 */

export const BREAK_KINDS = ["MISSING_IN_LEDGER", "MISSING_ON_STATEMENT", "AMOUNT_MISMATCH", "DIRECTION_MISMATCH", "DUPLICATE", "BALANCE_MISMATCH"] as const;
export type BreakKind = (typeof BREAK_KINDS)[number];
export type ReportStatus = "CLEAN" | "BREAKS" | "RESOLVED";
export type BankDirection = "CREDIT" | "DEBIT";

export interface StatementEntry {
  bankEntryId: string;
  direction: BankDirection;
  amount: bigint;
  valueDate: string;
  bookingDate: string;
  endToEndId: string;
  reference: string;
  traceNumber: string;
  transactionId: string;
  description: string;
}

export interface Statement {
  eventId: string;
  connector: string;
  environment: string;
  account: string;
  statementId: string;
  statementDate: string;
  timeZone: string;
  currency: string;
  openingBooked: bigint;
  closingBooked: bigint;
  entries: StatementEntry[];
  sourceFile: string;
}

/** A ledger transaction as reconciliation sees it. */
export interface RoutedPayment {
  id: string;
  platformId: string;
  type: "INCOMING" | "OUTGOING";
  status: string;
  amount: bigint;
  currency: string;
  reference: string;
  settledAt: Date | null;
  /**
   * A micro-deposit's credit (ownership verification): booked from MICRO_DEPOSIT_EXPENSE, with no
   * Transaction resource; matched like a payout by its transaction id or reference.
   */
  microDeposit?: boolean;
}

export interface NewBreak {
  kind: BreakKind;
  transactionId?: string;
  bankEntryId?: string;
  reference: string;
  ledgerAmount?: bigint;
  statementAmount?: bigint;
  ledgerDirection?: BankDirection;
  statementDirection?: BankDirection;
  detail: string;
}

export interface EntryMatch {
  bankEntryId: string;
  transactionId: string;
  direction: BankDirection;
}

export interface ReportRow {
  id: string;
  connector: string;
  account: string;
  statement_id: string;
  statement_date: string;
  currency: string;
  status: ReportStatus;
  entry_count: number;
  matched_count: number;
  opening_booked: bigint;
  closing_booked: bigint;
  entries_net: bigint;
  created_at: Date;
  updated_at: Date;
  break_count: number;
  open_break_count: number;
}

export interface BreakRow {
  id: string;
  report_id: string;
  position: number;
  kind: BreakKind;
  transaction_id: string | null;
  bank_entry_id: string | null;
  reference: string;
  ledger_amount: bigint | null;
  statement_amount: bigint | null;
  ledger_direction: string | null;
  statement_direction: string | null;
  detail: string;
  resolved_at: Date | null;
  resolution_note: string | null;
}

/** Reconciliation's statements in one transaction (src/data/reconciliation.ts). */
export interface ReconciliationTx {
  /** Records the statement; false when (connector, account, statement id) is already there. */
  insertStatement(s: Statement, now: Date): Promise<boolean>;
  /** The connector's transactions with one of these ids or references. */
  findRouted(connector: string, ids: string[], references: string[]): Promise<RoutedPayment[]>;
  /** The connector's transactions in `currency` that COMPLETED on `date` in `timeZone`. */
  settledOn(connector: string, currency: string, date: string, timeZone: string): Promise<RoutedPayment[]>;
  /** Matches of these transactions on earlier statements of the connector. */
  earlierMatches(connector: string, transactionIds: string[]): Promise<(EntryMatch & { statementId: string })[]>;
  insertReport(report: Omit<ReportRow, "break_count" | "open_break_count">, breaks: NewBreak[], matches: EntryMatch[]): Promise<{ breakIds: string[] }>;
  /** The break, locked. */
  lockBreak(id: string): Promise<BreakRow | undefined>;
  resolveBreak(id: string, note: string, now: Date): Promise<BreakRow>;
  /** Sets the report RESOLVED when none of its breaks is open; answers the report. */
  settleReportStatus(reportId: string, now: Date): Promise<ReportRow>;
  emitReconciled(report: ReportRow, breaks: NewBreak[], at: Date): Promise<void>;
}

export interface ReconciliationStore {
  transaction<T>(fn: (trx: ReconciliationTx) => Promise<T>): Promise<T>;
  /** Statements bound to a transaction the host opened (the consumer's inbox transaction). */
  within(inbox: unknown): ReconciliationTx;
  listReports(filter: { connector?: string; status?: ReportStatus; limit: number }): Promise<ReportRow[]>;
  getReport(id: string): Promise<{ report: ReportRow; breaks: BreakRow[] } | undefined>;
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const UUID_HEX = /^[0-9a-f]{32}$/i;

/** How a break names the ledger's side: a transaction's type, or a micro-deposit. */
const what = (p: Pick<RoutedPayment, "type" | "microDeposit">): string => (p.microDeposit ? "micro-deposit" : p.type);

/** A SEPA end-to-end id is the transaction's UUID without its dashes (connectors/sepa-iso20022 admission.ts). */
export function transactionIdOfEndToEnd(endToEndId: string): string | undefined {
  if (!UUID_HEX.test(endToEndId)) return undefined;
  const h = endToEndId.toLowerCase();
  return `Transaction:${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

function validZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** The direction of a payment on the connector's bank account: a payout leaves it, a pull or deposit comes in. */
export const bankDirectionOf = (p: Pick<RoutedPayment, "type">): BankDirection => (p.type === "OUTGOING" ? "DEBIT" : "CREDIT");

/**
 * The matching itself, without I/O. Each entry is matched to a transaction by the id the connector
 * recognised, the end-to-end id, our reference, or the bank entry id (an incoming credit's
 * transaction may carry the bank's entry id as its reference); then:
 * - no transaction: MISSING_IN_LEDGER;
 * - the transaction already matched in the same direction (on this statement or an earlier one): DUPLICATE;
 * - the other direction: a return when the transaction FAILED (money went and came back), else DIRECTION_MISMATCH;
 * - another amount: AMOUNT_MISMATCH.
 * Every transaction the ledger settled that day that no entry (here or before) matched: MISSING_ON_STATEMENT.
 * Closing − opening must equal credits − debits: else BALANCE_MISMATCH. Banks differ on entries
 * valued after the statement's day (a Finnish bank's closing booked balance includes them,
 * PostFinance's does not: both in the fixtures), so the movement may equal either the sum of all
 * booked entries or the sum of those valued by the statement's day.
 */
export function reconcile(
  s: Statement,
  found: { routed: RoutedPayment[]; settledThatDay: RoutedPayment[]; earlier: (EntryMatch & { statementId: string })[] },
): { breaks: NewBreak[]; matches: EntryMatch[]; matched: number; net: bigint } {
  const byId = new Map(found.routed.map((p) => [p.id, p]));
  const byReference = new Map(found.routed.filter((p) => p.reference).map((p) => [p.reference, p]));
  const earlier = new Map(found.earlier.map((m) => [`${m.transactionId}|${m.direction}`, m]));
  const here = new Map<string, string>();
  const seenEntries = new Set<string>();
  const breaks: NewBreak[] = [];
  const matches: EntryMatch[] = [];
  let matched = 0;
  let net = 0n;
  let valuedNet = 0n;

  for (const e of s.entries) {
    const signed = e.direction === "CREDIT" ? e.amount : -e.amount;
    net += signed;
    if (!e.valueDate || e.valueDate <= s.statementDate) valuedNet += signed;
    const base = { bankEntryId: e.bankEntryId, statementAmount: e.amount, statementDirection: e.direction };
    if (seenEntries.has(e.bankEntryId)) {
      breaks.push({ ...base, kind: "DUPLICATE", reference: e.reference, detail: `entry ${e.bankEntryId} appears twice on the statement` });
      continue;
    }
    seenEntries.add(e.bankEntryId);
    const e2e = transactionIdOfEndToEnd(e.endToEndId);
    const tx =
      (e.transactionId && byId.get(e.transactionId)) ||
      (e2e && byId.get(e2e)) ||
      (e.reference && byReference.get(e.reference)) ||
      byReference.get(e.bankEntryId) ||
      undefined;
    if (!tx) {
      const ids = [e.reference && `reference ${e.reference}`, e.endToEndId && `end-to-end id ${e.endToEndId}`, e.traceNumber && `trace ${e.traceNumber}`].filter(Boolean).join(", ");
      breaks.push({ ...base, kind: "MISSING_IN_LEDGER", reference: e.reference || e.endToEndId || e.traceNumber, detail: `the bank booked a ${e.direction} of ${e.amount} (${ids || "no reference"}) the ledger has no ${s.connector} transaction for` });
      continue;
    }
    const expected = bankDirectionOf(tx);
    const ledger = { transactionId: tx.id, reference: tx.reference, ledgerAmount: tx.amount, ledgerDirection: expected };
    const key = `${tx.id}|${e.direction}`;
    const before = here.get(key) ?? (earlier.has(key) ? `statement ${earlier.get(key)!.statementId}` : undefined);
    here.set(key, e.bankEntryId);
    matches.push({ bankEntryId: e.bankEntryId, transactionId: tx.id, direction: e.direction });
    if (before) {
      breaks.push({ ...base, ...ledger, kind: "DUPLICATE", detail: `${tx.id} was already booked as a ${e.direction} (${before.startsWith("statement") ? "on " + before : "entry " + before})` });
    } else if (e.direction !== expected && tx.status !== "FAILED") {
      breaks.push({ ...base, ...ledger, kind: "DIRECTION_MISMATCH", detail: `${tx.id} (${what(tx)}) should be a ${expected} on the bank account; the bank booked a ${e.direction}` });
    } else if (e.amount !== tx.amount) {
      breaks.push({ ...base, ...ledger, kind: "AMOUNT_MISMATCH", detail: `${tx.id} is ${tx.amount} in the ledger; the bank booked ${e.amount} (difference ${e.amount - tx.amount})` });
    } else {
      matched++;
    }
  }

  const seen = new Set([...here.keys()].map((k) => k.split("|")[0]));
  for (const tx of found.settledThatDay) {
    if (seen.has(tx.id) || earlier.has(`${tx.id}|${bankDirectionOf(tx)}`)) continue;
    breaks.push({
      kind: "MISSING_ON_STATEMENT",
      transactionId: tx.id,
      reference: tx.reference,
      ledgerAmount: tx.amount,
      ledgerDirection: bankDirectionOf(tx),
      detail: `${tx.id} completed on ${s.statementDate} in the ledger (${what(tx)} ${tx.amount} ${tx.currency}); the bank did not book it`,
    });
  }

  const movement = s.closingBooked - s.openingBooked;
  if (movement !== net && movement !== valuedNet) {
    breaks.push({
      kind: "BALANCE_MISMATCH",
      reference: "",
      ledgerAmount: net,
      statementAmount: movement,
      detail: `closing − opening booked balance is ${movement}; the entries add up to ${net} (difference ${movement - net})`,
    });
  }
  return { breaks, matches, matched, net };
}

export function createReconciliation(deps: { store: ReconciliationStore; clock: Clock; log?: Pick<Logger, "warn" | "info" | "error"> }) {
  const { store, clock, log } = deps;

  function statementFault(s: Statement): string | undefined {
    if (!s.connector || s.connector === SANDBOX_CONNECTOR) return "statements come from real connectors only";
    if (s.environment !== "PRODUCTION") return `environment ${JSON.stringify(s.environment)} is not PRODUCTION`;
    if (!s.account || !s.statementId) return "no account or statement id";
    if (!DAY.test(s.statementDate)) return `statement date ${JSON.stringify(s.statementDate)} is not YYYY-MM-DD`;
    if (!validZone(s.timeZone)) return `time zone ${JSON.stringify(s.timeZone)} is not an IANA zone`;
    if (s.entries.some((e) => e.amount <= 0n || (e.direction !== "CREDIT" && e.direction !== "DEBIT") || !e.bankEntryId)) return "an entry has no id, a non-positive amount or no direction";
    return undefined;
  }

  return {
    /**
     * Reconciles one statement in the consumer's inbox transaction. A statement seen before (same
     * connector, account and statement id, whatever the event id) changes nothing.
     */
    async applyStatement(inbox: unknown, s: Statement): Promise<"reconciled" | "duplicate" | "refused"> {
      const fault = statementFault(s);
      if (fault) {
        log?.error({ connector: s.connector, statement_id: s.statementId, event_id: s.eventId, reason: fault }, "rail statement refused");
        return "refused";
      }
      const trx = store.within(inbox);
      const now = clock.now();
      if (!(await trx.insertStatement(s, now))) {
        log?.info({ connector: s.connector, account: s.account, statement_id: s.statementId }, "rail statement already reconciled; ignored");
        return "duplicate";
      }
      const ids = new Set<string>();
      const references = new Set<string>();
      for (const e of s.entries) {
        if (e.transactionId) ids.add(e.transactionId);
        const e2e = transactionIdOfEndToEnd(e.endToEndId);
        if (e2e) ids.add(e2e);
        if (e.reference) references.add(e.reference);
        references.add(e.bankEntryId);
      }
      const routed = (await trx.findRouted(s.connector, [...ids], [...references])).filter((p) => p.currency === s.currency);
      const settledThatDay = await trx.settledOn(s.connector, s.currency, s.statementDate, s.timeZone);
      const earlier = await trx.earlierMatches(s.connector, [...new Set([...routed, ...settledThatDay].map((p) => p.id))]);
      const r = reconcile(s, { routed, settledThatDay, earlier });
      const report: Omit<ReportRow, "break_count" | "open_break_count"> = {
        id: newId("Reconciliation"),
        connector: s.connector,
        account: s.account,
        statement_id: s.statementId,
        statement_date: s.statementDate,
        currency: s.currency,
        status: r.breaks.length ? "BREAKS" : "CLEAN",
        entry_count: s.entries.length,
        matched_count: r.matched,
        opening_booked: s.openingBooked,
        closing_booked: s.closingBooked,
        entries_net: r.net,
        created_at: now,
        updated_at: now,
      };
      await trx.insertReport(report, r.breaks, r.matches);
      const full: ReportRow = { ...report, break_count: r.breaks.length, open_break_count: r.breaks.length };
      await trx.emitReconciled(full, r.breaks, now);
      const counts: Record<string, number> = {};
      for (const b of r.breaks) counts[b.kind] = (counts[b.kind] ?? 0) + 1;
      const fields = { report_id: report.id, connector: s.connector, account: s.account, statement_date: s.statementDate, statement_id: s.statementId, entries: s.entries.length, matched: r.matched };
      if (r.breaks.length) log?.warn({ ...fields, breaks: r.breaks.length, ...Object.fromEntries(Object.entries(counts).map(([k, v]) => [`breaks_${k.toLowerCase()}`, v])) }, "reconciliation: the bank statement disagrees with the ledger; see npm run admin -- reconcile show");
      else log?.info(fields, "reconciliation: the bank statement agrees with the ledger (CLEAN)");
      return "reconciled";
    },

    async listReports(f: { connector?: string; status?: string; limit?: number }): Promise<ReportRow[]> {
      const errs = [];
      if (f.status && f.status !== "CLEAN" && f.status !== "BREAKS" && f.status !== "RESOLVED") errs.push({ field: "status", reason: "must be CLEAN, BREAKS or RESOLVED" });
      if (f.limit !== undefined && (f.limit < 0 || f.limit > 500)) errs.push({ field: "limit", reason: "must be at most 500" });
      if (errs.length) throw errors.invalidInput(errs);
      return store.listReports({ connector: f.connector || undefined, status: (f.status || undefined) as ReportStatus | undefined, limit: f.limit || 50 });
    },

    async getReport(id: string): Promise<{ report: ReportRow; breaks: BreakRow[] }> {
      const found = id ? await store.getReport(id) : undefined;
      if (!found) throw errors.notFound("Reconciliation", id);
      return found;
    },

    /** The operator resolves one break with a note; resolving a resolved break changes nothing. */
    async resolveBreak(id: string, note: string): Promise<{ break: BreakRow; report: ReportRow }> {
      const text = note.trim();
      if (!text || text.length > 2000) throw errors.invalidInput([{ field: "note", reason: "is required: say what was found and done (at most 2000 characters)" }]);
      return store.transaction(async (trx) => {
        const b = await trx.lockBreak(id);
        if (!b) throw errors.notFound("ReconciliationBreak", id);
        const now = clock.now();
        const resolved = b.resolved_at ? b : await trx.resolveBreak(id, text, now);
        return { break: resolved, report: await trx.settleReportStatus(b.report_id, now) };
      });
    },
  };
}

export type Reconciliation = ReturnType<typeof createReconciliation>;
