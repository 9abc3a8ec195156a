import { create } from "@bufbuild/protobuf";
import {
  AddressSchema,
  BusinessInfoSchema,
  CurrencyListSchema,
  CustomerInputSchema,
  type Address,
  type CustomerInput,
} from "@corridor/proto/corridor/customers_kyc/v1/customer_pb.js";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { errors } from "@corridor/kit";
import { addressToJson, customerToJson, type AddressJson } from "@corridor/kit/rest-json";

// The answer side lives in @corridor/kit/rest-json (shared with webhooks); this file maps requests.
export { addressToJson, customerToJson, type AddressJson };

export interface CustomerBodyJson {
  customerType?: "INDIVIDUAL" | "BUSINESS";
  platformCustomerId?: string;
  umaAddress?: string;
  region?: string;
  currencies?: string[];
  email?: string;
  fullName?: string;
  birthDate?: string;
  nationality?: string;
  address?: AddressJson;
  businessInfo?: Partial<Record<string, string>>;
  kycStatus?: string;
  kybStatus?: string;
}

export function addressToProto(a: AddressJson): Address {
  return create(AddressSchema, { line1: a.line1, line2: a.line2 ?? "", city: a.city ?? "", state: a.state ?? "", postalCode: a.postalCode, country: a.country });
}

/** Individuals answer kycStatus, businesses kybStatus; empty strings are left out. */
/**
 * A create or patch body -> CustomerInput. kycStatus belongs to individuals and kybStatus to
 * businesses; on create the gateway knows the type and names the wrong one, on a patch the
 * service knows it.
 */
export function customerBodyToProto(body: CustomerBodyJson): CustomerInput {
  if (body.kycStatus !== undefined && body.kybStatus !== undefined) {
    throw errors.invalidInput([{ field: "body.kybStatus", reason: "send kycStatus (individuals) or kybStatus (businesses), not both" }]);
  }
  if (body.customerType === "BUSINESS" && body.kycStatus !== undefined) {
    throw errors.invalidInput([{ field: "body.kycStatus", reason: "applies to INDIVIDUAL customers; businesses have kybStatus" }]);
  }
  if (body.customerType === "INDIVIDUAL" && body.kybStatus !== undefined) {
    throw errors.invalidInput([{ field: "body.kybStatus", reason: "applies to BUSINESS customers; individuals have kycStatus" }]);
  }
  const init: MessageInitShape<typeof CustomerInputSchema> = {};
  if (body.customerType !== undefined) init.customerType = body.customerType;
  if (body.platformCustomerId !== undefined) init.platformCustomerId = body.platformCustomerId;
  if (body.umaAddress !== undefined) init.umaAddress = body.umaAddress;
  if (body.region !== undefined) init.region = body.region;
  if (body.currencies !== undefined) init.currencies = create(CurrencyListSchema, { codes: body.currencies });
  if (body.email !== undefined) init.email = body.email;
  if (body.fullName !== undefined) init.fullName = body.fullName;
  if (body.birthDate !== undefined) init.birthDate = body.birthDate;
  if (body.nationality !== undefined) init.nationality = body.nationality;
  if (body.address !== undefined) init.address = addressToProto(body.address);
  if (body.businessInfo !== undefined) {
    // `country` is Grid's name for countryOfIncorporation: one stored field, both names answered.
    const { country, ...info } = body.businessInfo;
    if (country !== undefined && info.countryOfIncorporation !== undefined && country !== info.countryOfIncorporation) {
      throw errors.invalidInput([{ field: "body.businessInfo.country", reason: "differs from countryOfIncorporation (the same field under Grid's name): send one" }]);
    }
    init.businessInfo = create(BusinessInfoSchema, { ...info, ...(country !== undefined ? { countryOfIncorporation: country } : {}) });
  }
  const status = body.kycStatus ?? body.kybStatus;
  if (status !== undefined) init.verificationStatus = status;
  return create(CustomerInputSchema, init);
}
