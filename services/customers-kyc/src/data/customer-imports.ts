import { completeIdempotencyKey, inTransaction } from "@corridor/kit";
import type { ColumnType, JSONColumnType, Kysely, Selectable, Transaction } from "kysely";
import type { CsvRow } from "../domain/customer-import-csv.js";
import { DuplicateImport, type CustomerImport, type ImportRowError, type ImportStatus, type ImportStore, type ImportTransact } from "../domain/customer-imports.js";
import type { Store } from "../domain/ports.js";
import { repositories } from "./store.js";
import type { CustomersKycDatabase } from "./tables.js";

/** Tables of bulk customer imports (migrations/20261228300000_customer_imports.ts). */
export interface CustomerImportsTable {
  id: string;
  platform_id: string;
  status: ImportStatus;
  file_name: string;
  sha256: string;
  total: number;
  processed: number;
  successful: number;
  failed: number;
  created_at: ColumnType<Date, Date, Date>;
  updated_at: ColumnType<Date, Date, Date>;
  completed_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

export interface CustomerImportRowsTable {
  job_id: string;
  row_number: number;
  line: number;
  platform_id: string;
  fields: JSONColumnType<CsvRow["fields"]>;
  status: "PENDING" | "CREATED" | "FAILED";
  customer_id: string | null;
  error: ColumnType<ImportRowError | null, string | null | undefined, string | null>;
}

export interface CustomerImportsDatabase extends CustomersKycDatabase {
  customer_imports: CustomerImportsTable;
  customer_import_rows: CustomerImportRowsTable;
}

type Db = Kysely<CustomerImportsDatabase> | Transaction<CustomerImportsDatabase>;

function toJob(r: Selectable<CustomerImportsTable>): CustomerImport {
  return {
    id: r.id,
    platformId: r.platform_id,
    status: r.status,
    fileName: r.file_name,
    sha256: r.sha256,
    total: r.total,
    processed: r.processed,
    successful: r.successful,
    failed: r.failed,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    completedAt: r.completed_at,
  };
}

const isUniqueViolation = (err: unknown) => (err as { code?: unknown })?.code === "23505";

export function importRepository(db: Db): ImportStore["imports"] {
  return {
    async insert(job) {
      try {
        await db
          .insertInto("customer_imports")
          .values({
            id: job.id,
            platform_id: job.platformId,
            status: job.status,
            file_name: job.fileName,
            sha256: job.sha256,
            total: job.total,
            processed: job.processed,
            successful: job.successful,
            failed: job.failed,
            created_at: job.createdAt,
            updated_at: job.updatedAt,
            completed_at: job.completedAt,
          })
          .execute();
      } catch (err) {
        throw isUniqueViolation(err) ? new DuplicateImport() : err;
      }
    },
    async update(job) {
      await db
        .updateTable("customer_imports")
        .set({
          status: job.status,
          total: job.total,
          processed: job.processed,
          successful: job.successful,
          failed: job.failed,
          updated_at: job.updatedAt,
          completed_at: job.completedAt,
        })
        .where("id", "=", job.id)
        .where("platform_id", "=", job.platformId)
        .execute();
    },
    async findByFile(platformId, sha256) {
      const r = await db.selectFrom("customer_imports").selectAll().where("platform_id", "=", platformId).where("sha256", "=", sha256).executeTakeFirst();
      return r && toJob(r);
    },
    async get(platformId, id) {
      const r = await db.selectFrom("customer_imports").selectAll().where("platform_id", "=", platformId).where("id", "=", id).executeTakeFirst();
      return r && toJob(r);
    },
    async lock(id) {
      const r = await db.selectFrom("customer_imports").selectAll().where("id", "=", id).forUpdate().skipLocked().executeTakeFirst();
      return r && toJob(r);
    },
    async open(limit) {
      const rows = await db
        .selectFrom("customer_imports")
        .select(["id", "platform_id"])
        .where("status", "in", ["PENDING", "PROCESSING"])
        .orderBy("created_at")
        .orderBy("id")
        .limit(limit)
        .execute();
      return rows.map((r) => ({ id: r.id, platformId: r.platform_id }));
    },
    async insertRows(jobId, platformId, rows) {
      if (rows.length === 0) return;
      await db
        .insertInto("customer_import_rows")
        .values(rows.map((r) => ({ job_id: jobId, row_number: r.row, line: r.line, platform_id: platformId, fields: JSON.stringify(r.fields), status: "PENDING" as const, customer_id: null, error: null })))
        .execute();
    },
    async nextPending(jobId) {
      const r = await db
        .selectFrom("customer_import_rows")
        .select(["row_number", "line", "fields"])
        .where("job_id", "=", jobId)
        .where("status", "=", "PENDING")
        .orderBy("row_number")
        .limit(1)
        .executeTakeFirst();
      return r && { row: r.row_number, line: r.line, fields: r.fields };
    },
    async markCreated(jobId, row, customerId) {
      await db.updateTable("customer_import_rows").set({ status: "CREATED", customer_id: customerId }).where("job_id", "=", jobId).where("row_number", "=", row).execute();
    },
    async markFailed(jobId, row, error) {
      await db.updateTable("customer_import_rows").set({ status: "FAILED", error: JSON.stringify(error) }).where("job_id", "=", jobId).where("row_number", "=", row).execute();
    },
    async errorsOf(jobId) {
      const rows = await db.selectFrom("customer_import_rows").select(["error"]).where("job_id", "=", jobId).where("status", "=", "FAILED").orderBy("row_number").execute();
      return rows.flatMap((r) => (r.error ? [r.error] : []));
    },
  };
}

/** An ImportTransact over `db`: the customer repositories and events, the import's, on one transaction. */
export function importTransactOver(
  db: Kysely<CustomerImportsDatabase>,
  events: (trx: Transaction<CustomersKycDatabase>) => Store["events"],
  importEvents: (trx: Transaction<CustomersKycDatabase>) => ImportStore["importEvents"],
): ImportTransact {
  return (work) =>
    inTransaction(db, (trx) => {
      // The customer repositories see the same transaction through the narrower table types.
      const kyc = trx as unknown as Transaction<CustomersKycDatabase>;
      return work({
        ...repositories(kyc),
        events: events(kyc),
        imports: importRepository(trx),
        importEvents: importEvents(kyc),
        completeIdempotencyKey: (ref, body) => completeIdempotencyKey(trx, { ...ref, status: 202, body }),
      });
    });
}
