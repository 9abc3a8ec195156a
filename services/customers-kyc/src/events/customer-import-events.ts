import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { customerEventTopic, enqueueEvent, newId } from "@corridor/kit";
import { CustomerEventSchema, CustomerImportFinishedSchema } from "@corridor/proto/corridor/customers_kyc/v1/events_pb.js";
import type { Transaction } from "kysely";
import type { ImportStore } from "../domain/customer-imports.js";
import { customerImportToPb } from "../handlers/customer-imports.js";

/**
 * A finished bulk import on corridor.customers.notices.v1 (customerEventTopic; key: the job id), through the outbox in the
 * transaction that finished it. Event type BULK_UPLOAD_COMPLETED or BULK_UPLOAD_FAILED, Grid's
 * BULK_UPLOAD.COMPLETED / .FAILED for platforms that take Grid's names (docs/events.md).
 */
export function customerImportEvents(trx: Transaction<any>): ImportStore["importEvents"] {
  return {
    async finished(job, at) {
      const eventId = newId("Event");
      const message = create(CustomerEventSchema, {
        eventId,
        occurredAt: timestampFromDate(at),
        platformId: job.platformId,
        payload: { case: "customerImportFinished", value: create(CustomerImportFinishedSchema, { job: customerImportToPb(job) }) },
      });
      await enqueueEvent(trx, { topic: customerEventTopic(message), key: job.id, eventId, eventType: `BULK_UPLOAD_${job.status}`, schema: CustomerEventSchema, message });
    },
  };
}
