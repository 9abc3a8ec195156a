import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import type { LedgerAdminService } from "@corridor/proto/corridor/ledger/v1/ledger_admin_service_pb.js";
import type { Ledger } from "../domain/ledger.js";
import type { AccountCorrectionRow, RailBindingRow, ReceivedCreditRow } from "../domain/model.js";
import type { BreakRow, Reconciliation, ReportRow } from "../domain/reconciliation.js";
import type { createTrialBalance } from "../domain/trial-balance.js";

const bindingToPb = (b: RailBindingRow) => ({
  platformId: b.platform_id,
  currency: b.currency,
  paymentRail: b.payment_rail,
  connector: b.connector,
  source: b.source,
  updatedAt: timestampFromDate(b.updated_at),
});

const correctionToPb = (r: AccountCorrectionRow) => ({
  id: r.id,
  connector: r.connector,
  bankEntryId: r.bank_entry_id,
  transactionId: r.transaction_id,
  platformId: r.platform_id ?? "",
  externalAccountId: r.external_account_id ?? "",
  code: r.code,
  corrected: r.corrected,
  correctedData: r.corrected_data,
  status: r.status,
  detail: r.detail,
  receivedAt: timestampFromDate(r.received_at),
});

const itemToPb = (r: ReceivedCreditRow) => ({
  id: r.id,
  connector: r.connector,
  bankEntryId: r.bank_entry_id,
  amount: r.amount,
  currency: r.currency,
  paymentRail: r.payment_rail,
  creditedAccount: r.credited_account,
  reference: r.reference,
  senderName: r.sender_name,
  senderAccount: r.sender_account,
  valueDate: r.value_date,
  status: r.status,
  suspenseReason: r.suspense_reason,
  platformId: r.platform_id ?? "",
  internalAccountId: r.internal_account_id ?? "",
  transactionId: r.transaction_id ?? "",
  note: r.note,
  returnTransactionId: r.return_transaction_id ?? "",
  returnReason: r.return_reason,
  returnDetail: r.return_detail,
  receivedAt: timestampFromDate(r.received_at),
  updatedAt: timestampFromDate(r.updated_at),
});

const reportToPb = (r: ReportRow) => ({
  reportId: r.id,
  connector: r.connector,
  account: r.account,
  statementDate: r.statement_date,
  statementId: r.statement_id,
  currency: r.currency,
  status: r.status,
  entryCount: r.entry_count,
  matchedCount: r.matched_count,
  openingBooked: BigInt(r.opening_booked),
  closingBooked: BigInt(r.closing_booked),
  entriesNet: BigInt(r.entries_net),
  breakCount: r.break_count,
  openBreakCount: r.open_break_count,
  createdAt: timestampFromDate(r.created_at),
});

const breakToPb = (b: BreakRow) => ({
  breakId: b.id,
  kind: b.kind,
  transactionId: b.transaction_id ?? "",
  bankEntryId: b.bank_entry_id ?? "",
  reference: b.reference,
  ledgerAmount: b.ledger_amount === null ? 0n : BigInt(b.ledger_amount),
  statementAmount: b.statement_amount === null ? 0n : BigInt(b.statement_amount),
  ledgerDirection: b.ledger_direction ?? "",
  statementDirection: b.statement_direction ?? "",
  detail: b.detail,
  resolvedAt: b.resolved_at ? timestampFromDate(b.resolved_at) : undefined,
  resolutionNote: b.resolution_note ?? "",
});

/** LedgerAdminService: the operator's questions about the books and the rail bindings; the gateway routes none of it. */
export function createAdminHandler({
  trialBalance,
  ledger,
  reconciliation,
}: {
  trialBalance: ReturnType<typeof createTrialBalance>;
  ledger: Pick<Ledger, "bindRail" | "unbindRail" | "listRailBindings" | "listSuspense" | "listAccountCorrections" | "getSuspenseItem" | "assignSuspenseItem" | "returnSuspenseItem">;
  reconciliation: Pick<Reconciliation, "listReports" | "getReport" | "resolveBreak">;
}): ServiceImpl<typeof LedgerAdminService> {
  return {
    async getTrialBalance(req) {
      return { currencies: await trialBalance(req.platformId || undefined) };
    },
    async bindPlatformRail(req) {
      const b = await ledger.bindRail({ platformId: req.platformId, currency: req.currency, paymentRail: req.paymentRail, connector: req.connector, source: "OPERATOR" });
      return { binding: bindingToPb(b) };
    },
    async unbindPlatformRail(req) {
      return { removed: await ledger.unbindRail({ platformId: req.platformId, currency: req.currency, paymentRail: req.paymentRail }) };
    },
    async listPlatformRailBindings(req) {
      return { bindings: (await ledger.listRailBindings(req.platformId || undefined)).map(bindingToPb) };
    },
    async listSuspenseItems(req) {
      return { items: (await ledger.listSuspense({ status: req.status, connector: req.connector, limit: req.limit })).map(itemToPb) };
    },
    async listAccountCorrections(req) {
      return { corrections: (await ledger.listAccountCorrections({ status: req.status, connector: req.connector, limit: req.limit })).map(correctionToPb) };
    },
    async getSuspenseItem(req) {
      return { item: itemToPb(await ledger.getSuspenseItem(req.id)) };
    },
    async assignSuspenseItem(req) {
      return { item: itemToPb(await ledger.assignSuspenseItem({ id: req.id, internalAccountId: req.internalAccountId, note: req.note })) };
    },
    async returnSuspenseItem(req) {
      return { item: itemToPb(await ledger.returnSuspenseItem({ id: req.id, note: req.note, returned: req.returned, reason: req.reason })) };
    },
    async listReconciliationReports(req) {
      return { reports: (await reconciliation.listReports({ connector: req.connector, status: req.status, limit: req.limit })).map(reportToPb) };
    },
    async getReconciliationReport(req) {
      const { report, breaks } = await reconciliation.getReport(req.reportId);
      return { report: reportToPb(report), breaks: breaks.map(breakToPb) };
    },
    async resolveReconciliationBreak(req) {
      const r = await reconciliation.resolveBreak(req.breakId, req.note);
      return { break: breakToPb(r.break), report: reportToPb(r.report) };
    },
  };
}
