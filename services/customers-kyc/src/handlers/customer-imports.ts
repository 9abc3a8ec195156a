import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { CustomerImportJobSchema, type CustomerImportJob } from "@corridor/proto/corridor/customers_kyc/v1/customer_import_pb.js";
import type { CustomerImportsService } from "@corridor/proto/corridor/customers_kyc/v1/customer_imports_service_pb.js";
import type { CustomerImports, CustomerImportView } from "../domain/customer-imports.js";

/** A job as its proto message (errors included). */
export function customerImportToPb(j: CustomerImportView): CustomerImportJob {
  return create(CustomerImportJobSchema, {
    id: j.id,
    platformId: j.platformId,
    status: j.status,
    total: j.total,
    processed: j.processed,
    successful: j.successful,
    failed: j.failed,
    errors: j.errors.map((e) => ({ correlationId: e.correlationId, code: e.code, message: e.message, row: e.row, line: e.line, fieldErrors: e.fieldErrors })),
    createdAt: timestampFromDate(j.createdAt),
    completedAt: j.completedAt ? timestampFromDate(j.completedAt) : undefined,
    fileName: j.fileName,
    sha256: j.sha256,
  });
}

/** CustomerImportsService: proto in, domain call, proto out. */
export function createCustomerImportsHandler({ imports }: { imports: CustomerImports }): ServiceImpl<typeof CustomerImportsService> {
  return {
    async startCustomerImport(req) {
      const { job, replayed } = await imports.start(req.platformId, { content: req.content, fileName: req.fileName, idempotencyKey: req.idempotencyKey });
      return { job: customerImportToPb(job), replayed };
    },
    async getCustomerImport(req) {
      return { job: customerImportToPb(await imports.get(req.platformId, req.jobId)) };
    },
  };
}
