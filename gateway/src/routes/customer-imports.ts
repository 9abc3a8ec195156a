import multipart from "@fastify/multipart";
import { multipartRefusal } from "../multipart.js";
import { AppError, errors } from "@corridor/kit";
import { customerImportToJson } from "@corridor/kit/rest-json";
import type { FastifyRequest } from "fastify";
import { Type } from "typebox";
import { principalOf } from "../auth.js";
import { HttpError } from "../http-status.js";
import { markIdempotentEffectDone } from "../idempotency.js";
import { errorResponses } from "../schemas/common.js";
import { IdempotencyHeaders } from "../schemas/transfers.js";
import type { Api, RouteDeps } from "./types.js";

/**
 * The largest CSV part the gateway reads before customers-kyc judges it against its own limit
 * (CORRIDOR_BULK_IMPORT_MAX_BYTES, at most 64 MiB by its schema): a ceiling, not the limit.
 */
export const CSV_UPLOAD_CEILING_BYTES = 64 * 1024 * 1024;

const CSV_MULTIPART_OPTIONS = {
  limits: { fileSize: CSV_UPLOAD_CEILING_BYTES, files: 1, fields: 4, fieldSize: 1024, parts: 5, headerPairs: 100 },
  throwFileSizeLimit: true,
};

const JobStatus = Type.Enum(["PENDING", "PROCESSING", "COMPLETED", "FAILED"], { description: "PENDING until the worker takes the job, PROCESSING while it creates customers, then COMPLETED (some or all rows created) or FAILED (no row created)." });

const JobAccepted = Type.Object(
  {
    jobId: Type.String({ description: "Job:<uuidv7>: GET /customers/bulk/jobs/{jobId} follows it.", examples: ["Job:019542f5-b3e7-7d02-8000-000000000006"] }),
    status: Type.Enum(["PENDING", "PROCESSING"], { description: "The job's status when accepted." }),
  },
  { description: "Grid's BulkCustomerImportJobAccepted." },
);

const ImportErrorEntry = Type.Object(
  {
    correlationId: Type.String({ description: "The row's platformCustomerId, or row_<n> (n = the data row's number, 1 after the header) when it has none." }),
    code: Type.String({ description: "Why the row created nothing: INVALID_INPUT (its values; details.errors lists them), CONFLICT (platformCustomerId in use), UMA_ADDRESS_EXISTS, ..." }),
    message: Type.String({ description: "A readable message." }),
    details: Type.Object(
      {
        row: Type.Integer({ description: "The data row's number (1 is the first row after the header)." }),
        line: Type.Integer({ description: "The row's line in the file (the header is line 1)." }),
        errors: Type.Optional(Type.Array(Type.Object({ field: Type.String({ description: "The refused field." }), reason: Type.String({ description: "Why." }) }, { description: "One refused value." }), { description: "The refused values of the row." })),
      },
      { description: "Where the row is, and what was refused." },
    ),
  },
  { description: "Grid's BulkCustomerImportErrorEntry: GridError plus correlationId." },
);

const Job = Type.Object(
  {
    jobId: Type.String({ description: "Job:<uuidv7>." }),
    status: JobStatus,
    progress: Type.Object(
      {
        total: Type.Integer({ description: "Rows in the file (the header not counted)." }),
        processed: Type.Integer({ description: "Rows handled so far." }),
        successful: Type.Integer({ description: "Rows whose customer was created." }),
        failed: Type.Integer({ description: "Rows that created nothing (see errors)." }),
      },
      { description: "Progress of the job." },
    ),
    errors: Type.Array(ImportErrorEntry, { description: "One entry per failed row, in file order." }),
    completedAt: Type.Optional(Type.String({ format: "date-time", description: "When the last row was handled (COMPLETED or FAILED only)." })),
  },
  { description: "Grid's BulkCustomerImportJob." },
);

const CsvUpload = Type.Object(
  { file: Type.String({ format: "binary", description: "The CSV file (UTF-8, header line first): Grid's columns, see the route's description." }) },
  { description: "multipart/form-data: the CSV file in `file`." },
);

const JobIdParams = Type.Object({ jobId: Type.String({ minLength: 1, maxLength: 128, description: "Job:<uuidv7>." }) }, { description: "Path parameters naming a bulk import job." });

/** The one `file` part's bytes and name. */
async function readCsvUpload(request: FastifyRequest): Promise<{ content: Buffer; fileName: string }> {
  if (!request.isMultipart()) throw new HttpError(415, "UNSUPPORTED_MEDIA_TYPE", "Send the CSV file as multipart/form-data, in a part named file", { expected: "multipart/form-data" });
  let file: { content: Buffer; fileName: string } | undefined;
  const unknown: string[] = [];
  try {
    for await (const part of request.parts()) {
      if (part.type === "file" && part.fieldname === "file" && !file) {
        file = { content: await part.toBuffer(), fileName: part.filename ?? "" };
      } else {
        if (part.type === "file") await part.toBuffer();
        unknown.push(part.fieldname);
      }
    }
  } catch (err) {
    multipartRefusal(err, { fileField: "body.file", ceilingBytes: CSV_UPLOAD_CEILING_BYTES, what: "a CSV upload (one file part named file)" });
  }
  const problems = unknown.map((f) => ({ field: `body.${f}`, reason: "is not a part of a CSV upload (send only the file, in a part named file)" }));
  if (!file) problems.push({ field: "body.file", reason: "is required (a file part named file)" });
  if (problems.length) throw errors.invalidInput(problems);
  return file!;
}

const tags = ["Customers"];

const CSV_DESCRIPTION = [
  "Creates customers in bulk from a CSV file (multipart/form-data, the file in `file`), asynchronously: answers 202 with the job, whose progress and per-row errors GET /customers/bulk/jobs/{jobId} shows; when the last row is handled the platform gets BULK_UPLOAD_COMPLETED (some rows created) or BULK_UPLOAD_FAILED (none) — BULK_UPLOAD.COMPLETED / .FAILED with webhookEventNaming GRID — whose data is the job.",
  "The file: UTF-8 text (a BOM is allowed), RFC 4180 quoting, a header line naming Grid's columns in any order: platformCustomerId and customerType (INDIVIDUAL or BUSINESS) are required; umaAddress (a missing `$` is added; default $<platformCustomerId>@<umaDomain>), fullName, birthDate (YYYY-MM-DD), email, addressLine1, addressLine2, city, state, postalCode, country (ISO 3166-1 alpha-2), businessLegalName (required for BUSINESS), businessRegistrationNumber, businessTaxId; platformAccountId and description are accepted and not stored. Each row is checked as POST /customers checks a body.",
  "Refused whole with 400 INVALID_INPUT on `file`, naming the line, nothing stored: not UTF-8, a NUL byte, an unknown, repeated or missing required column, a row with more or fewer values than the header, an unclosed or stray quote, a row over 64 KiB, no rows, more than CORRIDOR_BULK_IMPORT_MAX_ROWS rows (10,000 by default) or more than CORRIDOR_BULK_IMPORT_MAX_BYTES (5 MiB by default).",
  "A row that cannot create its customer (a value refused, platformCustomerId or umaAddress already used) is an entry of the job's errors; the other rows go on. Each row's customer is created exactly once, also across restarts.",
  "Idempotent: the same file again (same bytes) is 409 BULK_IMPORT_DUPLICATE_FILE naming the first job in details.jobId; an Idempotency-Key replays the first answer for the same file and is 422 IDEMPOTENCY_KEY_REUSED with another. Needs MANAGE.",
].join("\n\n");

/** Grid's bulk customer import: POST /customers/bulk/csv and GET /customers/bulk/jobs/{jobId}. */
export function customerImportRoutes(app: Api, { clients }: RouteDeps): void {
  app.register(async (scope) => {
    await scope.register(multipart, CSV_MULTIPART_OPTIONS);
    const api = scope as unknown as Api;

    api.post(
      "/customers/bulk/csv",
      {
        config: { permission: "MANAGE" },
        // The multipart body is read in the handler; the body schema only documents it.
        validatorCompiler: () => () => true,
        schema: {
          summary: "Upload customers via CSV file",
          description: CSV_DESCRIPTION,
          tags,
          headers: IdempotencyHeaders,
          consumes: ["multipart/form-data"],
          body: CsvUpload,
          response: { 202: JobAccepted, ...errorResponses },
        },
      },
      async (request, reply) => {
        const { platformId } = principalOf(request);
        const key = (request.headers["idempotency-key"] as string | undefined) ?? "";
        const file = await readCsvUpload(request);
        const res = await clients.customerImports.startCustomerImport({ platformId, content: file.content, fileName: file.fileName, idempotencyKey: key });
        markIdempotentEffectDone(request);
        if (res.replayed) reply.header("Idempotent-Replayed", "true");
        const job = customerImportToJson(res.job);
        return reply.code(202).send({ jobId: job.jobId, status: job.status === "PROCESSING" ? "PROCESSING" : "PENDING" });
      },
    );

    api.get(
      "/customers/bulk/jobs/:jobId",
      {
        schema: {
          summary: "Get bulk import job status",
          description:
            "The job's status and progress (total, processed, successful, failed), every failed row's error (correlationId: its platformCustomerId, else row_<n>; details: row, line and the refused values), and completedAt once finished. Another platform's or an unknown job → 404 BULK_IMPORT_JOB_NOT_FOUND. Needs VIEW.",
          tags,
          params: JobIdParams,
          response: { 200: Job, ...errorResponses },
        },
      },
      async (request) => {
        const { platformId } = principalOf(request);
        const { jobId } = request.params as { jobId: string };
        return customerImportToJson((await clients.customerImports.getCustomerImport({ platformId, jobId })).job);
      },
    );
  });
}
