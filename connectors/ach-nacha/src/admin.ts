// The ACH connector's operator service (ConnectorAdminService, @corridor/connector admin.ts):
//
//   files       the files built for the bank, by status;
//   release     a HELD file (an upload nobody could vouch for, or a name taken in the bank's inbox)
//               goes back to BUILT: the next pass uploads it as built (same name, same bytes);
//   cancel      a HELD file is never sent: CANCELLED, and each of its entries still FILED becomes
//               FAILED `FILE_CANCELLED` with its outcome, in the transaction that cancels the file
//               (the ledger releases the money and sends the FAILED webhook); a second cancel
//               finds no HELD file and changes nothing;
//   bank items  what the bank's files said that the connector keeps; its suspense: returns and
//               NOCs it refused to match (ach_bank_items.suspense_reason) and refused NOCs (C61-C69).
import { connectorAdminErrors, type BankItem, type ConnectorAdmin, type ConnectorFile } from "@corridor/connector";
import { sql } from "kysely";
import type { EngineDeps } from "./engine.js";

/** The failure reason of the entries of a file the operator cancelled. */
export const FILE_CANCELLED = "FILE_CANCELLED";

/** Why a refused NOC (C61-C69) is in the suspense list. */
export const REFUSED_NOC = "REFUSED_NOC";

type AdminDeps = Pick<EngineDeps, "db" | "clock" | "log" | "outcomes">;

const FILE_COLUMNS = ["file_name", "status", "detail", "window_key", "entry_count", "total_debit", "total_credit", "built_at", "uploaded_at"] as const;

function fileOf(r: Record<string, any>): ConnectorFile {
  return {
    fileName: r.file_name,
    status: r.status,
    detail: r.detail ?? "",
    windowKey: r.window_key,
    entryCount: Number(r.entry_count),
    totalDebit: BigInt(r.total_debit),
    totalCredit: BigInt(r.total_credit),
    builtAt: new Date(r.built_at),
    ...(r.uploaded_at ? { uploadedAt: new Date(r.uploaded_at) } : {}),
  };
}

const decision = (what: string, note: string, at: Date, before: string) => `${what} by the operator at ${at.toISOString()}${note ? `: ${note}` : ""} (held: ${before})`;

/** The operator's view and decisions over the ACH connector's files and bank items. */
export function achAdmin(d: AdminDeps): ConnectorAdmin {
  /** Locks the file and checks it is HELD (inside the deciding transaction). */
  const heldFile = async (trx: any, name: string) => {
    const f = await trx.selectFrom("ach_files").select([...FILE_COLUMNS]).where("file_name", "=", name).forUpdate().executeTakeFirst();
    if (!f) throw connectorAdminErrors.fileNotFound(name);
    if (f.status !== "HELD") throw connectorAdminErrors.fileNotHeld(name, f.status);
    return f;
  };
  return {
    async listFiles({ status, limit }) {
      let q = d.db.selectFrom("ach_files").select([...FILE_COLUMNS]).orderBy("built_at", "desc").orderBy("file_name", "desc").limit(limit);
      if (status) q = q.where("status", "=", status);
      return (await q.execute()).map(fileOf);
    },

    async releaseFile(name, note) {
      const file = await d.db.transaction().execute(async (trx) => {
        const f = await heldFile(trx, name);
        const now = d.clock.now();
        return trx
          .updateTable("ach_files")
          .set({ status: "BUILT", decided_at: now, detail: decision("released", note, now, f.detail) })
          .where("file_name", "=", name)
          .returning([...FILE_COLUMNS])
          .executeTakeFirstOrThrow();
      });
      d.log.warn({ file: name }, "held ACH file released by the operator: it is uploaded on the next pass");
      return fileOf(file);
    },

    async cancelFile(name, note) {
      const out = await d.db.transaction().execute(async (trx) => {
        const f = await heldFile(trx, name);
        const now = d.clock.now();
        const entries = await trx.selectFrom("ach_entries").selectAll().where("file_name", "=", name).where("status", "=", "FILED").orderBy("trace_number").forUpdate().execute();
        for (const e of entries) {
          await trx.updateTable("ach_entries").set({ status: "FAILED", return_code: FILE_CANCELLED }).where("transaction_id", "=", e.transaction_id).execute();
          await d.outcomes.report(trx, { platformId: e.platform_id, transactionId: e.transaction_id, status: "FAILED", reason: FILE_CANCELLED, at: now });
        }
        const file = await trx
          .updateTable("ach_files")
          .set({ status: "CANCELLED", decided_at: now, detail: decision("cancelled", note, now, f.detail) })
          .where("file_name", "=", name)
          .returning([...FILE_COLUMNS])
          .executeTakeFirstOrThrow();
        return { file: fileOf(file), failedEntries: entries.length };
      });
      d.log.warn({ file: name, failed_entries: out.failedEntries }, "held ACH file cancelled by the operator: never sent, its entries failed back to the ledger");
      return out;
    },

    async listBankItems({ suspenseOnly, kind, limit }) {
      const refusedNoc = sql<boolean>`(kind = 'NOC' and coalesce((detail->>'refused')::boolean, false))`;
      let q = d.db
        .selectFrom("ach_bank_items")
        .select(["bank_file", "line", "kind", "code", "trace_number", "original_trace_number", "amount", "transaction_id", "suspense_reason", "detail", "received_at"])
        .select(refusedNoc.as("refused_noc"))
        .orderBy("received_at", "desc")
        .orderBy("bank_file", "desc")
        .orderBy("line", "desc")
        .limit(limit);
      if (suspenseOnly) q = q.where((eb) => eb.or([eb("suspense_reason", "is not", null), refusedNoc as any]));
      if (kind) q = q.where("kind", "=", kind);
      const rows = await q.execute();
      return rows.map(
        (r: any): BankItem => ({
          bankFile: r.bank_file,
          line: Number(r.line),
          kind: r.kind,
          code: r.code,
          traceNumber: r.trace_number,
          originalTraceNumber: r.original_trace_number,
          amount: BigInt(r.amount),
          transactionId: r.transaction_id ?? "",
          suspenseReason: r.suspense_reason ?? (r.refused_noc ? REFUSED_NOC : ""),
          detail: typeof r.detail === "string" ? JSON.parse(r.detail) : r.detail,
          receivedAt: new Date(r.received_at),
        }),
      );
    },
  };
}
