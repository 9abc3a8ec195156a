import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { CustomerImportJobSchema } from "@corridor/proto/corridor/customers_kyc/v1/customer_import_pb.js";
import { CustomerEventSchema, CustomerImportFinishedSchema } from "@corridor/proto/corridor/customers_kyc/v1/events_pb.js";
import { describe, expect, it } from "vitest";
import { envelopeFor } from "../src/domain/grid-webhooks.js";
import { customerWebhook } from "../src/events/webhook-events.js";

const finished = (status: string) =>
  create(CustomerEventSchema, {
    eventId: "Event:1",
    platformId: "Platform:1",
    occurredAt: timestampFromDate(new Date("2025-08-15T14:32:00Z")),
    payload: {
      case: "customerImportFinished",
      value: create(CustomerImportFinishedSchema, {
        job: create(CustomerImportJobSchema, {
          id: "Job:019542f5-b3e7-7d02-8000-000000000006",
          platformId: "Platform:1",
          status,
          total: 3,
          processed: 3,
          successful: status === "FAILED" ? 0 : 2,
          failed: status === "FAILED" ? 3 : 1,
          errors: [{ correlationId: "row_2", code: "INVALID_INPUT", message: "Invalid input", row: 2, line: 3, fieldErrors: [{ field: "birthDate", reason: "must be a date as YYYY-MM-DD" }] }],
          completedAt: timestampFromDate(new Date("2025-08-15T14:32:00Z")),
        }),
      }),
    },
  });

describe("BULK_UPLOAD webhooks", () => {
  it("turns a finished import into BULK_UPLOAD_COMPLETED / _FAILED whose data is Grid's BulkCustomerImportJob", () => {
    expect(customerWebhook(finished("COMPLETED"))).toEqual({
      type: "BULK_UPLOAD_COMPLETED",
      data: {
        jobId: "Job:019542f5-b3e7-7d02-8000-000000000006",
        status: "COMPLETED",
        progress: { total: 3, processed: 3, successful: 2, failed: 1 },
        errors: [{ correlationId: "row_2", code: "INVALID_INPUT", message: "Invalid input", details: { row: 2, line: 3, errors: [{ field: "birthDate", reason: "must be a date as YYYY-MM-DD" }] } }],
        completedAt: "2025-08-15T14:32:00.000Z",
      },
    });
    expect(customerWebhook(finished("FAILED"))?.type).toBe("BULK_UPLOAD_FAILED");
  });

  it("sends nothing for a job that is not finished, and Grid's name to a GRID platform", () => {
    expect(customerWebhook(finished("PROCESSING"))).toBeUndefined();
    const body = JSON.stringify({ id: "Webhook:1", type: "BULK_UPLOAD_FAILED", timestamp: "2025-08-15T14:32:00Z", data: {} });
    expect(JSON.parse(envelopeFor("GRID", body)).type).toBe("BULK_UPLOAD.FAILED");
  });
});
