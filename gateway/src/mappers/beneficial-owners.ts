import { create } from "@bufbuild/protobuf";
import { PersonalInfoSchema, type BeneficialOwner, type PersonalInfo } from "@corridor/proto/corridor/customers_kyc/v1/customer_pb.js";
import { addressToJson, addressToProto, type AddressJson } from "./customers.js";
import { emptyToUndefined, isoFromTimestamp } from "@corridor/kit/rest-json";

export interface PersonalInfoJson {
  firstName?: string;
  lastName?: string;
  middleName?: string;
  birthDate?: string;
  nationality?: string;
  address?: AddressJson;
  idType?: string;
  identifier?: string;
  email?: string;
  phoneNumber?: string;
  countryOfIssuance?: string;
}

/** Absent fields become empty strings, which the service reads as "absent". */
export function personalInfoToProto(p: PersonalInfoJson): PersonalInfo {
  const { address, ...rest } = p;
  return create(PersonalInfoSchema, { ...rest, address: address ? addressToProto(address) : undefined });
}

function personalInfoToJson(p: PersonalInfo | undefined) {
  if (!p) throw new Error("service answered an owner without personal info");
  return {
    firstName: p.firstName,
    lastName: p.lastName,
    middleName: emptyToUndefined(p.middleName),
    birthDate: p.birthDate,
    nationality: p.nationality,
    address: addressToJson(p.address),
    idType: p.idType,
    identifier: p.identifier,
    email: emptyToUndefined(p.email),
    phoneNumber: emptyToUndefined(p.phoneNumber),
    countryOfIssuance: emptyToUndefined(p.countryOfIssuance),
  };
}

export function ownerToJson(o: BeneficialOwner | undefined) {
  if (!o) throw new Error("service answered without a beneficial owner");
  return {
    id: o.id,
    customerId: o.customerId,
    roles: [...o.roles],
    ownershipPercentage: o.ownershipPercentage,
    personalInfo: personalInfoToJson(o.personalInfo),
    kycStatus: o.kycStatus,
    createdAt: isoFromTimestamp(o.createdAt),
    updatedAt: isoFromTimestamp(o.updatedAt),
  };
}
