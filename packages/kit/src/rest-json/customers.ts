// Public JSON of a resource, shared by the gateway (its GET answers) and notifications (a
// webhook's data is the resource as its GET returns it, decisions §8). Pure: proto in, JSON out.
import type { Address, Customer } from "@corridor/proto/corridor/customers_kyc/v1/customer_pb.js";
import { emptyToUndefined, isoFromTimestamp } from "./time.js";

export interface AddressJson {
  line1: string;
  line2?: string;
  city?: string;
  state?: string;
  postalCode: string;
  country: string;
}

export function addressToJson(a: Address | undefined): AddressJson | undefined {
  if (!a) return undefined;
  return {
    line1: a.line1,
    line2: emptyToUndefined(a.line2),
    city: emptyToUndefined(a.city),
    state: emptyToUndefined(a.state),
    postalCode: a.postalCode,
    country: a.country,
  };
}

export function customerToJson(c: Customer | undefined) {
  if (!c) throw new Error("service answered without a customer");
  const business = c.customerType === "BUSINESS";
  const b = c.businessInfo;
  return {
    id: c.id,
    platformCustomerId: c.platformCustomerId,
    customerType: c.customerType,
    umaAddress: emptyToUndefined(c.umaAddress),
    region: emptyToUndefined(c.region),
    currencies: [...c.currencies],
    email: emptyToUndefined(c.email),
    createdAt: isoFromTimestamp(c.createdAt),
    updatedAt: isoFromTimestamp(c.updatedAt),
    isDeleted: c.isDeleted,
    ...(business ? { kybStatus: c.verificationStatus } : { kycStatus: c.verificationStatus }),
    ...(business
      ? {}
      : { fullName: emptyToUndefined(c.fullName), birthDate: emptyToUndefined(c.birthDate), nationality: emptyToUndefined(c.nationality) }),
    address: addressToJson(c.address),
    businessInfo:
      business && b
        ? {
            legalName: b.legalName,
            registrationNumber: emptyToUndefined(b.registrationNumber),
            taxId: emptyToUndefined(b.taxId),
            incorporatedOn: emptyToUndefined(b.incorporatedOn),
            entityType: emptyToUndefined(b.entityType),
            countryOfIncorporation: emptyToUndefined(b.countryOfIncorporation),
            // Grid's name for the same field.
            country: emptyToUndefined(b.countryOfIncorporation),
            doingBusinessAs: emptyToUndefined(b.doingBusinessAs),
            website: emptyToUndefined(b.website),
          }
        : undefined,
    contactVerification: contactVerificationToJson(c.contactVerification),
  };
}

type ContactStatus = "PENDING" | "VERIFIED";

/** Grid's contactVerification: only the channels with a contact on file; absent when none. */
function contactVerificationToJson(v: Customer["contactVerification"]): { email?: ContactStatus; phone?: ContactStatus } | undefined {
  if (!v || (!v.email && !v.phone)) return undefined;
  return { email: (emptyToUndefined(v.email) as ContactStatus | undefined), phone: (emptyToUndefined(v.phone) as ContactStatus | undefined) };
}
