import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { enqueueEvent, newId, topics, type ConsumerDefinition } from "@corridor/kit";
import { RailStatementSchema, ReconciliationReportedSchema } from "@corridor/proto/corridor/ledger/v1/rail_statements_pb.js";
import type { Transaction } from "kysely";
import type { NewBreak, Reconciliation, ReportRow } from "../domain/reconciliation.js";

/**
 * The operator event of a reconciled statement, on corridor.reconciliations.v1 (event types
 * RAIL_RECONCILIATION_CLEAN and RAIL_RECONCILIATION_BREAKS), in the reconciling transaction.
 */
export async function emitReconciled(trx: Transaction<any>, report: ReportRow, breaks: NewBreak[], at: Date): Promise<void> {
  const eventId = newId("Event");
  const eventType = report.status === "CLEAN" ? "RAIL_RECONCILIATION_CLEAN" : "RAIL_RECONCILIATION_BREAKS";
  const counts: Record<string, number> = {};
  for (const b of breaks) counts[b.kind] = (counts[b.kind] ?? 0) + 1;
  await enqueueEvent(trx, {
    topic: topics.reconciliations,
    key: report.id,
    eventId,
    eventType,
    schema: ReconciliationReportedSchema,
    message: create(ReconciliationReportedSchema, {
      eventId,
      occurredAt: timestampFromDate(at),
      reportId: report.id,
      connector: report.connector,
      account: report.account,
      statementDate: report.statement_date,
      statementId: report.statement_id,
      status: report.status,
      entryCount: report.entry_count,
      matchedCount: report.matched_count,
      breaks: counts,
    }),
  });
}

/** The consumer of corridor.rail-statements.v1: each statement reconciled once (inbox per event id, and per statement id). */
export function statementConsumer(reconciliation: Reconciliation): ConsumerDefinition<typeof RailStatementSchema> {
  return {
    name: "rail-statements",
    topic: topics.railStatements,
    schema: RailStatementSchema,
    eventId: (e) => e.eventId,
    async handle(e, trx) {
      await reconciliation.applyStatement(trx, {
        eventId: e.eventId,
        connector: e.connector,
        environment: e.environment,
        account: e.account,
        statementId: e.statementId,
        statementDate: e.statementDate,
        timeZone: e.timeZone || "UTC",
        currency: e.currency,
        openingBooked: e.openingBooked,
        closingBooked: e.closingBooked,
        sourceFile: e.sourceFile,
        entries: e.entries.map((x) => ({
          bankEntryId: x.bankEntryId,
          direction: x.direction as "CREDIT" | "DEBIT",
          amount: x.amount,
          valueDate: x.valueDate,
          bookingDate: x.bookingDate,
          endToEndId: x.endToEndId,
          reference: x.reference,
          traceNumber: x.traceNumber,
          transactionId: x.transactionId,
          description: x.description,
        })),
      });
    },
  };
}
