import { createHash } from "node:crypto";
import { AppError, errors, newId, type Clock, type FieldError, type IdempotencyKeyRef, type IdempotencyRunner } from "@corridor/kit";
import { newCustomer, insertNewCustomer } from "./customers.js";
import { correlationIdOf, readCustomerCsv, rowToCustomerInput, type CsvLimits, type CsvRow } from "./customer-import-csv.js";
import type { PlatformDirectory, Store } from "./ports.js";
import type { PlatformSettings } from "./types.js";

// Bulk imports of customers (Grid's POST /customers/bulk/csv and GET /customers/bulk/jobs/{jobId}).
// The upload stores the file's rows with a PENDING job; a background worker (workers/
// customer-imports.ts) then creates the customers one row per transaction: a row's customer, its
// events and the row's CREATED mark commit together, so a process that stops anywhere resumes at
// the first row still PENDING and creates no customer twice. A finished job emits
// BULK_UPLOAD_COMPLETED (some rows created) or BULK_UPLOAD_FAILED (none).

export const IMPORT_STATUSES = ["PENDING", "PROCESSING", "COMPLETED", "FAILED"] as const;
export type ImportStatus = (typeof IMPORT_STATUSES)[number];

export interface CustomerImport {
  id: string;
  platformId: string;
  status: ImportStatus;
  fileName: string;
  sha256: string;
  total: number;
  processed: number;
  successful: number;
  failed: number;
  createdAt: Date;
  updatedAt: Date;
  completedAt: Date | null;
}

/** Why a row created nothing (Grid's BulkCustomerImportErrorEntry). */
export interface ImportRowError {
  correlationId: string;
  code: string;
  message: string;
  row: number;
  line: number;
  fieldErrors: FieldError[];
}

/** A job with its row errors, as GET /customers/bulk/jobs/{jobId} answers it. */
export interface CustomerImportView extends CustomerImport {
  errors: ImportRowError[];
}

/** A stored row still to be handled. */
export type PendingRow = CsvRow;

/** The store of an import's unit of work: the customer repositories and events, plus the import's own. */
export interface ImportStore extends Store {
  imports: {
    /** Throws DuplicateImport when the platform already has a job for the same file. */
    insert(job: CustomerImport): Promise<void>;
    update(job: CustomerImport): Promise<void>;
    findByFile(platformId: string, sha256: string): Promise<CustomerImport | undefined>;
    get(platformId: string, id: string): Promise<CustomerImport | undefined>;
    /** Locks the job; undefined when another transaction holds it (or it does not exist). */
    lock(id: string): Promise<CustomerImport | undefined>;
    /** Jobs not finished, oldest first. */
    open(limit: number): Promise<Pick<CustomerImport, "id" | "platformId">[]>;
    insertRows(jobId: string, platformId: string, rows: CsvRow[]): Promise<void>;
    /** The lowest-numbered PENDING row of the job. */
    nextPending(jobId: string): Promise<PendingRow | undefined>;
    markCreated(jobId: string, row: number, customerId: string): Promise<void>;
    markFailed(jobId: string, row: number, error: ImportRowError): Promise<void>;
    /** Failed rows' errors, in row order. */
    errorsOf(jobId: string): Promise<ImportRowError[]>;
  };
  importEvents: {
    finished(job: CustomerImportView, at: Date): Promise<void>;
  };
  /** Stores the first answer under the Idempotency-Key, in this transaction. */
  completeIdempotencyKey(ref: IdempotencyKeyRef, body: unknown): Promise<void>;
}

export type ImportTransact = <T>(work: (store: ImportStore) => Promise<T>) => Promise<T>;

/** The data layer's word for a second job of the same file (the unique index on platform and SHA-256). */
export class DuplicateImport extends Error {
  constructor() {
    super("a job for this file exists");
    this.name = "DuplicateImport";
  }
}

export const duplicateFile = (job: CustomerImport) =>
  errors.conflict(
    "BULK_IMPORT_DUPLICATE_FILE",
    `This file was uploaded before, as job ${job.id} (${job.status}); the same file is imported once. GET /customers/bulk/jobs/${job.id} shows its result`,
    { jobId: job.id, status: job.status },
  );

const jobNotFound = (id: string) => errors.notFound("BulkImportJob", id);

export interface CustomerImportsDeps {
  transact: ImportTransact;
  clock: Clock;
  platforms: PlatformDirectory;
  idempotency: IdempotencyRunner;
  limits: CsvLimits;
  /** Called after an upload commits (the worker starts on it without waiting for its next poll). */
  onStarted?: () => void;
}

export interface UploadInput {
  content: Uint8Array;
  fileName: string;
  idempotencyKey: string;
}

/** What one step of the worker did to a job. */
export type StepResult = "row" | "finished" | "busy";

/** The answer stored under an Idempotency-Key: the job as first accepted (dates as ISO strings). */
type StoredJob = Omit<CustomerImport, "createdAt" | "updatedAt" | "completedAt"> & { createdAt: string; updatedAt: string; completedAt: string | null };

const storeJob = (j: CustomerImport): StoredJob => ({ ...j, createdAt: j.createdAt.toISOString(), updatedAt: j.updatedAt.toISOString(), completedAt: j.completedAt?.toISOString() ?? null });
const loadJob = (s: StoredJob): CustomerImportView => ({
  ...s,
  createdAt: new Date(s.createdAt),
  updatedAt: new Date(s.updatedAt),
  completedAt: s.completedAt ? new Date(s.completedAt) : null,
  errors: [],
});

/** A row's refusal as its error entry. */
function rowError(row: PendingRow, err: AppError): ImportRowError {
  const listed = (err.details as { errors?: unknown }).errors;
  const fieldErrors = Array.isArray(listed)
    ? listed.filter((e): e is FieldError => typeof (e as FieldError)?.field === "string" && typeof (e as FieldError)?.reason === "string").map((e) => ({ field: e.field, reason: e.reason }))
    : [];
  return { correlationId: correlationIdOf(row), code: err.code, message: err.message, row: row.row, line: row.line, fieldErrors };
}

/** Refusals that belong to the row (its values, or a duplicate): recorded, and the job goes on. */
const isRowRefusal = (err: unknown): err is AppError => err instanceof AppError && (err.outcome === "INVALID" || err.outcome === "CONFLICT");

export function createCustomerImports({ transact, clock, platforms, idempotency, limits, onStarted }: CustomerImportsDeps) {
  const finish = async (store: ImportStore, job: CustomerImport): Promise<void> => {
    const now = new Date(Math.max(clock.now().getTime(), job.updatedAt.getTime()));
    const done: CustomerImport = { ...job, status: job.successful === 0 && job.failed > 0 ? "FAILED" : "COMPLETED", completedAt: now, updatedAt: now };
    await store.imports.update(done);
    await store.importEvents.finished({ ...done, errors: await store.imports.errorsOf(job.id) }, now);
  };

  const advance = (job: CustomerImport, outcome: "successful" | "failed"): CustomerImport => {
    const now = new Date(Math.max(clock.now().getTime(), job.updatedAt.getTime()));
    return { ...job, status: "PROCESSING", processed: job.processed + 1, [outcome]: job[outcome] + 1, updatedAt: now };
  };

  return {
    /**
     * Accepts a CSV file: checks it as a whole and stores its rows with a PENDING job, in one
     * transaction (a refused file stores nothing). The same file again (by SHA-256) is CONFLICT
     * BULK_IMPORT_DUPLICATE_FILE naming the first job; the same Idempotency-Key with the same file
     * answers the job as first accepted, with another file UNPROCESSABLE IDEMPOTENCY_KEY_REUSED.
     */
    async start(platformId: string, upload: UploadInput): Promise<{ job: CustomerImportView; replayed: boolean }> {
      const sha256 = createHash("sha256").update(upload.content).digest("hex");
      const fileName = upload.fileName.slice(0, 255);
      const { value, replayed } = await idempotency(
        { platformId, key: upload.idempotencyKey, request: { operation: "customers.bulk.csv", sha256 }, namespace: "customer-import", checkKey: true },
        (ref) =>
          transact(async (store) => {
            const existing = await store.imports.findByFile(platformId, sha256);
            if (existing) throw duplicateFile(existing);
            const now = clock.now();
            const job: CustomerImport = {
              id: newId("Job"),
              platformId,
              status: "PENDING",
              fileName,
              sha256,
              total: 0,
              processed: 0,
              successful: 0,
              failed: 0,
              createdAt: now,
              updatedAt: now,
              completedAt: null,
            };
            try {
              await store.imports.insert(job);
            } catch (err) {
              if (!(err instanceof DuplicateImport)) throw err;
              // A concurrent upload of the same file committed first.
              throw errors.conflict("BULK_IMPORT_DUPLICATE_FILE", "This file is being uploaded by another request; the same file is imported once", {});
            }
            job.total = await readCustomerCsv(upload.content, limits, (rows) => store.imports.insertRows(job.id, platformId, rows));
            await store.imports.update(job);
            if (ref) await store.completeIdempotencyKey(ref, storeJob(job));
            return { ...job, errors: [] } as CustomerImportView;
          }),
        ({ body }) => loadJob(body as StoredJob),
      );
      onStarted?.();
      return { job: value, replayed };
    },

    /** The job and its row errors; another platform's or an unknown job is NOT_FOUND. */
    get(platformId: string, id: string): Promise<CustomerImportView> {
      return transact(async (store) => {
        const job = await store.imports.get(platformId, id);
        if (!job) throw jobNotFound(id);
        return { ...job, errors: await store.imports.errorsOf(id) };
      });
    },

    /** Unfinished jobs, oldest first. */
    open(limit: number): Promise<Pick<CustomerImport, "id" | "platformId">[]> {
      return transact((store) => store.imports.open(limit));
    },

    /**
     * Handles the job's next row: creates its customer (with the row's CREATED mark and the job's
     * counters in the same transaction), or records why it cannot; finishes the job after its last
     * row. "busy": another process holds the job. A failure that is not the row's (the database)
     * throws, and the row stays PENDING for the next try.
     */
    async step(jobId: string, platform: PlatformSettings): Promise<StepResult> {
      let refused: { row: PendingRow; err: AppError } | undefined;
      const result = await transact(async (store): Promise<StepResult> => {
        const job = await store.imports.lock(jobId);
        if (!job) return "busy";
        if (job.status === "COMPLETED" || job.status === "FAILED") return "finished";
        const row = await store.imports.nextPending(jobId);
        if (!row) {
          await finish(store, job);
          return "finished";
        }
        const input = rowToCustomerInput(row.fields);
        let customer;
        try {
          customer = newCustomer(job.platformId, input, platform, clock.now());
        } catch (err) {
          if (!isRowRefusal(err)) throw err;
          // Nothing was written for the row: its refusal is recorded in this same transaction.
          await store.imports.markFailed(jobId, row.row, rowError(row, err));
          await store.imports.update(advance(job, "failed"));
          return "row";
        }
        try {
          await insertNewCustomer(store, customer, input, platform);
        } catch (err) {
          // A duplicate aborts the transaction (a unique violation): it is recorded in the next one.
          if (isRowRefusal(err)) refused = { row, err };
          throw err;
        }
        await store.imports.markCreated(jobId, row.row, customer.id);
        await store.imports.update(advance(job, "successful"));
        return "row";
      }).catch((err: unknown) => {
        if (refused && err === refused.err) return undefined;
        throw err;
      });
      if (result) return result;
      const { row, err } = refused!;
      return transact(async (store): Promise<StepResult> => {
        const job = await store.imports.lock(jobId);
        if (!job) return "busy";
        const next = await store.imports.nextPending(jobId);
        // Someone else handled the row meanwhile: nothing to record.
        if (!next || next.row !== row.row) return "row";
        await store.imports.markFailed(jobId, row.row, rowError(row, err));
        await store.imports.update(advance(job, "failed"));
        return "row";
      });
    },

    /**
     * One pass of the worker: the rows of unfinished jobs, oldest job first, at most `maxRows`
     * of them. Answers how many rows it handled (`maxRows` means more may be waiting).
     */
    async runPass(maxRows: number): Promise<number> {
      let handled = 0;
      const jobs = await this.open(20);
      for (const job of jobs) {
        const platform = await platforms.settings(job.platformId);
        while (handled < maxRows) {
          const r = await this.step(job.id, platform);
          if (r !== "row") break;
          handled++;
        }
        if (handled >= maxRows) break;
      }
      return handled;
    },
  };
}

export type CustomerImports = ReturnType<typeof createCustomerImports>;
