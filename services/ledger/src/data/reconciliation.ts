import { inTransaction, newId } from "@corridor/kit";
import { sql, type Kysely, type Transaction } from "kysely";
import type { BreakRow, ReconciliationStore, ReconciliationTx, ReportRow, RoutedPayment } from "../domain/reconciliation.js";
import type { Db, LedgerDatabase, Trx } from "./tables.js";

/** The operator event writer (src/events/reconciliation-events.ts), in the caller's transaction. */
export type ReconciledEmitter = (trx: Transaction<any>, report: ReportRow, breaks: Parameters<ReconciliationTx["emitReconciled"]>[1], at: Date) => Promise<void>;

const routedColumns = ["id", "platform_id", "type", "status", "amount", "currency", "reference", "settled_at"] as const;
const toRouted = (r: { id: string; platform_id: string; type: "INCOMING" | "OUTGOING"; status: string; amount: bigint; currency: string; reference: string; settled_at: Date | null }): RoutedPayment => ({
  id: r.id,
  platformId: r.platform_id,
  type: r.type,
  status: r.status,
  amount: BigInt(r.amount),
  currency: r.currency,
  reference: r.reference,
  settledAt: r.settled_at,
});

/**
 * A micro-deposit (ownership verification, docs/connectors.md) as reconciliation sees it: a payout
 * of its own on the connector's bank account, with no transactions row. Its rail statuses read as
 * a transaction's: a credit that failed or was returned is FAILED (the money did not stay out),
 * and one the rail completed counts as settled when its outcome was booked.
 */
const microDepositColumns = ["transaction_id", "platform_id", "status", "amount", "currency", "reference", "updated_at"] as const;
const microDepositRouted = (r: { transaction_id: string; platform_id: string; status: string; amount: bigint; currency: string; reference: string; updated_at: Date }): RoutedPayment => ({
  id: r.transaction_id,
  platformId: r.platform_id,
  type: "OUTGOING",
  status: r.status === "COMPLETED" ? "COMPLETED" : r.status === "PENDING" ? "PROCESSING" : "FAILED",
  amount: BigInt(r.amount),
  currency: r.currency,
  reference: r.reference,
  settledAt: r.status === "COMPLETED" ? r.updated_at : null,
  microDeposit: true,
});

/** Reports with their break counts. */
function reports(db: Db) {
  return db
    .selectFrom("reconciliation_reports as r")
    .selectAll("r")
    .select((eb) => [
      eb.selectFrom("reconciliation_breaks as b").select(sql<number>`count(*)::int4`.as("n")).whereRef("b.report_id", "=", "r.id").as("break_count"),
      eb.selectFrom("reconciliation_breaks as b").select(sql<number>`count(*)::int4`.as("n")).whereRef("b.report_id", "=", "r.id").where("b.resolved_at", "is", null).as("open_break_count"),
    ]);
}

function bound(trx: Trx, emit: ReconciledEmitter): ReconciliationTx {
  return {
    async insertStatement(s, now) {
      const r = await trx
        .insertInto("rail_statements")
        .values({
          connector: s.connector,
          account: s.account,
          statement_id: s.statementId,
          event_id: s.eventId,
          statement_date: s.statementDate,
          time_zone: s.timeZone,
          currency: s.currency,
          opening_booked: s.openingBooked,
          closing_booked: s.closingBooked,
          entries: JSON.stringify(s.entries.map((e) => ({ ...e, amount: e.amount.toString() }))),
          source_file: s.sourceFile,
          received_at: now,
        })
        .onConflict((oc) => oc.columns(["connector", "account", "statement_id"]).doNothing())
        .executeTakeFirst();
      return r.numInsertedOrUpdatedRows === 1n;
    },

    async findRouted(connector, ids, references) {
      if (!ids.length && !references.length) return [];
      const rows = await trx
        .selectFrom("transactions")
        .select(routedColumns)
        .where("connector", "=", connector)
        .where((eb) => eb.or([...(ids.length ? [eb("id", "in", ids)] : []), ...(references.length ? [eb("reference", "in", references)] : [])]))
        .execute();
      const deposits = await trx
        .selectFrom("micro_deposits")
        .select(microDepositColumns)
        .where("connector", "=", connector)
        .where((eb) => eb.or([...(ids.length ? [eb("transaction_id", "in", ids)] : []), ...(references.length ? [eb("reference", "in", references)] : [])]))
        .execute();
      return [...rows.map(toRouted), ...deposits.map(microDepositRouted)];
    },

    async settledOn(connector, currency, date, timeZone) {
      const rows = await trx
        .selectFrom("transactions")
        .select(routedColumns)
        .where("connector", "=", connector)
        .where("currency", "=", currency)
        .where("status", "=", "COMPLETED")
        .where("settled_at", "is not", null)
        .where(sql<boolean>`(settled_at at time zone ${timeZone})::date = ${date}::date`)
        .orderBy("settled_at")
        .orderBy("id")
        .execute();
      const deposits = await trx
        .selectFrom("micro_deposits")
        .select(microDepositColumns)
        .where("connector", "=", connector)
        .where("currency", "=", currency)
        .where("status", "=", "COMPLETED")
        .where(sql<boolean>`(updated_at at time zone ${timeZone})::date = ${date}::date`)
        .orderBy("updated_at")
        .orderBy("transaction_id")
        .execute();
      return [...rows.map(toRouted), ...deposits.map(microDepositRouted)];
    },

    async earlierMatches(connector, transactionIds) {
      if (!transactionIds.length) return [];
      const rows = await trx
        .selectFrom("reconciliation_matches as m")
        .innerJoin("reconciliation_reports as r", "r.id", "m.report_id")
        .select(["m.bank_entry_id", "m.transaction_id", "m.direction", "r.statement_id"])
        .where("r.connector", "=", connector)
        .where("m.transaction_id", "in", transactionIds)
        .execute();
      return rows.map((m) => ({ bankEntryId: m.bank_entry_id, transactionId: m.transaction_id, direction: m.direction as "CREDIT" | "DEBIT", statementId: m.statement_id }));
    },

    async insertReport(report, breaks, matches) {
      await trx.insertInto("reconciliation_reports").values(report).execute();
      const breakIds = breaks.map(() => newId("ReconciliationBreak"));
      if (breaks.length) {
        await trx
          .insertInto("reconciliation_breaks")
          .values(
            breaks.map((b, i) => ({
              id: breakIds[i]!,
              report_id: report.id,
              position: i + 1,
              kind: b.kind,
              transaction_id: b.transactionId ?? null,
              bank_entry_id: b.bankEntryId ?? null,
              reference: b.reference,
              ledger_amount: b.ledgerAmount ?? null,
              statement_amount: b.statementAmount ?? null,
              ledger_direction: b.ledgerDirection ?? null,
              statement_direction: b.statementDirection ?? null,
              detail: b.detail,
              resolved_at: null,
              resolution_note: null,
            })),
          )
          .execute();
      }
      if (matches.length) {
        await trx
          .insertInto("reconciliation_matches")
          .values(matches.map((m) => ({ report_id: report.id, bank_entry_id: m.bankEntryId, transaction_id: m.transactionId, direction: m.direction })))
          .execute();
      }
      return { breakIds };
    },

    async lockBreak(id) {
      return (await trx.selectFrom("reconciliation_breaks").selectAll().where("id", "=", id).forUpdate().executeTakeFirst()) as BreakRow | undefined;
    },

    async resolveBreak(id, note, now) {
      return (await trx
        .updateTable("reconciliation_breaks")
        .set({ resolved_at: now, resolution_note: note })
        .where("id", "=", id)
        .returningAll()
        .executeTakeFirstOrThrow()) as BreakRow;
    },

    async settleReportStatus(reportId, now) {
      await trx
        .updateTable("reconciliation_reports")
        .set({ status: "RESOLVED", updated_at: now })
        .where("id", "=", reportId)
        .where("status", "=", "BREAKS")
        .where(({ not, exists, selectFrom }) => not(exists(selectFrom("reconciliation_breaks").select("id").where("report_id", "=", reportId).where("resolved_at", "is", null))))
        .execute();
      return (await reports(trx).where("r.id", "=", reportId).executeTakeFirstOrThrow()) as ReportRow;
    },

    emitReconciled: (report, breaks, at) => emit(trx, report, breaks, at),
  };
}

/** The domain's ReconciliationStore over Kysely. */
export function reconciliationStore(db: Kysely<LedgerDatabase>, emit: ReconciledEmitter): ReconciliationStore {
  return {
    transaction: (fn) => inTransaction(db, (trx) => fn(bound(trx, emit))),
    within: (inbox) => bound(inbox as Trx, emit),
    async listReports(f) {
      let q = reports(db);
      if (f.connector) q = q.where("r.connector", "=", f.connector);
      if (f.status) q = q.where("r.status", "=", f.status);
      return (await q.orderBy("r.statement_date", "desc").orderBy("r.connector").orderBy("r.account").orderBy("r.id", "desc").limit(f.limit).execute()) as ReportRow[];
    },
    async getReport(id) {
      const report = (await reports(db).where("r.id", "=", id).executeTakeFirst()) as ReportRow | undefined;
      if (!report) return undefined;
      const breaks = (await db.selectFrom("reconciliation_breaks").selectAll().where("report_id", "=", id).orderBy("position").execute()) as BreakRow[];
      return { report, breaks };
    },
  };
}
