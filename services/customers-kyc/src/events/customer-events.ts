import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { customerEventTopic, enqueueEvent, newId } from "@corridor/kit";
import {
  BeneficialOwnerUpdatedSchema,
  CustomerCreatedSchema,
  CustomerDeletedSchema,
  CustomerEventSchema,
  CustomerStatusChangedSchema,
  CustomerUpdatedSchema,
  InvitationUpdatedSchema,
  VerificationUpdatedSchema,
  type CustomerEvent,
} from "@corridor/proto/corridor/customers_kyc/v1/events_pb.js";
import type { Transaction } from "kysely";
import type { Store } from "../domain/ports.js";
import { customerToPb, invitationToPb, ownerToPb, summaryToPb, verificationToPb } from "../handlers/mappers.js";

/**
 * Producer of the customer topics (envelope CustomerEvent, key = the customer the event is about,
 * so one customer's events stay in order: the ledger opens accounts from
 * CustomerCreated/CustomerUpdated). Each event goes to the topic of the services that act on it
 * (the kit's customerEventTopic: the record for the ledger, the webhooks for notifications). The event-type header carries the public type the
 * notifications service turns into webhooks (decisions §8). Events go to the outbox inside the
 * caller's transaction, so they are published if and only if the change commits.
 */
export function customerEvents(trx: Transaction<any>): Store["events"] {
  const emit = async (platformId: string, key: string, at: Date, eventType: string, payload: CustomerEvent["payload"]) => {
    const eventId = newId("Event");
    const message = create(CustomerEventSchema, { eventId, occurredAt: timestampFromDate(at), platformId, payload });
    await enqueueEvent(trx, { topic: customerEventTopic(message), key, eventId, eventType, schema: CustomerEventSchema, message });
  };
  return {
    customerCreated: (c, at) =>
      emit(c.platformId, c.id, at, "CUSTOMER_CREATED", {
        case: "customerCreated",
        value: create(CustomerCreatedSchema, { customer: summaryToPb(c), resource: customerToPb(c) }),
      }),
    customerUpdated: (c, at) =>
      emit(c.platformId, c.id, at, "CUSTOMER_UPDATED", {
        case: "customerUpdated",
        value: create(CustomerUpdatedSchema, { customer: summaryToPb(c), resource: customerToPb(c) }),
      }),
    customerDeleted: (c, at) =>
      emit(c.platformId, c.id, at, "CUSTOMER_DELETED", {
        case: "customerDeleted",
        value: create(CustomerDeletedSchema, { customer: summaryToPb(c), resource: customerToPb(c) }),
      }),
    customerStatusChanged: (c, previous, at) =>
      emit(c.platformId, c.id, at, `CUSTOMER_${c.customerType === "BUSINESS" ? "KYB" : "KYC"}_${c.verificationStatus}`, {
        case: "customerStatusChanged",
        value: create(CustomerStatusChangedSchema, { customer: customerToPb(c), previousStatus: previous }),
      }),
    verificationUpdated: (v, at) =>
      emit(v.platformId, v.customerId, at, `VERIFICATION_${v.verificationStatus}`, {
        case: "verificationUpdated",
        value: create(VerificationUpdatedSchema, { verification: verificationToPb(v) }),
      }),
    ownerChanged: (o, created, at) =>
      emit(o.platformId, o.customerId, at, created ? "BENEFICIAL_OWNER_CREATED" : "BENEFICIAL_OWNER_UPDATED", {
        case: "beneficialOwnerUpdated",
        value: create(BeneficialOwnerUpdatedSchema, { beneficialOwner: ownerToPb(o) }),
      }),
    invitationChanged: (i, at) =>
      emit(i.platformId, i.inviterCustomerId, at, i.status === "PENDING" ? "INVITATION_CREATED" : `INVITATION_${i.status}`, {
        case: "invitationUpdated",
        value: create(InvitationUpdatedSchema, { invitation: invitationToPb(i) }),
      }),
  };
}
