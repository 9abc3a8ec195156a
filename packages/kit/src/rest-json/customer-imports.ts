import type { CustomerImportJob } from "@corridor/proto/corridor/customers_kyc/v1/customer_import_pb.js";
import { optionalIso } from "./time.js";

/**
 * A bulk customer import as Grid's BulkCustomerImportJob: GET /customers/bulk/jobs/{jobId} and the
 * `data` of BULK_UPLOAD_* webhooks. An error entry is Grid's GridError plus correlationId (the
 * row's platformCustomerId, else row_<n>); details carry the row, its line and, when its values
 * were refused, `errors` as {field, reason} like an INVALID_INPUT answer.
 */
export function customerImportToJson(j: CustomerImportJob | undefined) {
  if (!j) throw new Error("service answered without a bulk import job");
  const completedAt = optionalIso(j.completedAt);
  return {
    jobId: j.id,
    status: j.status as "PENDING" | "PROCESSING" | "COMPLETED" | "FAILED",
    progress: { total: j.total, processed: j.processed, successful: j.successful, failed: j.failed },
    errors: j.errors.map((e) => ({
      correlationId: e.correlationId,
      code: e.code,
      message: e.message,
      details: {
        row: e.row,
        line: e.line,
        ...(e.fieldErrors.length ? { errors: e.fieldErrors.map((f) => ({ field: f.field, reason: f.reason })) } : {}),
      },
    })),
    ...(completedAt ? { completedAt } : {}),
  };
}
