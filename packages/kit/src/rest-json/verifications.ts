// Public JSON of a resource, shared by the gateway (its GET answers) and notifications (a
// webhook's data is the resource as its GET returns it, decisions §8). Pure: proto in, JSON out.
import type { Verification } from "@corridor/proto/corridor/customers_kyc/v1/customer_pb.js";
import { isoFromTimestamp } from "./time.js";

export function verificationToJson(v: Verification | undefined) {
  if (!v) throw new Error("service answered without a verification");
  return {
    id: v.id,
    customerId: v.customerId,
    verificationStatus: v.verificationStatus,
    errors: v.errors.map((e) => ({ type: e.type, field: e.field, reason: e.reason })),
    createdAt: isoFromTimestamp(v.createdAt),
    updatedAt: isoFromTimestamp(v.updatedAt),
  };
}
