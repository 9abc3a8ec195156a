import { create } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import {
  AddressSchema,
  BeneficialOwnerSchema,
  BusinessInfoSchema,
  ContactVerificationSchema,
  CustomerSchema,
  InvitationSchema,
  PersonalInfoSchema,
  VerificationErrorSchema,
  VerificationSchema,
  type Address as AddressPb,
  type BusinessInfo as BusinessInfoPb,
  type BeneficialOwner as BeneficialOwnerPb,
  type Customer as CustomerPb,
  type CustomerInput as CustomerInputPb,
  type Invitation as InvitationPb,
  type PersonalInfo as PersonalInfoPb,
  type Verification as VerificationPb,
} from "@corridor/proto/corridor/customers_kyc/v1/customer_pb.js";
import { CustomerSummarySchema, type CustomerSummary } from "@corridor/proto/corridor/customers_kyc/v1/customer_summary_pb.js";
import type { TimeRange } from "@corridor/proto/corridor/common/v1/paging_pb.js";
import { KycLinkPageSchema, type KycLinkPage as KycLinkPagePb } from "@corridor/proto/corridor/customers_kyc/v1/customers_kyc_service_pb.js";
import { contactVerificationOf } from "../domain/contact-verification.js";
import type { InvitationView } from "../domain/invitations.js";
import { documentToPb } from "./documents.js";
import type { KycLinkPage } from "../domain/kyc-links.js";
import type { Address, BeneficialOwner, BusinessInfo, Customer, CustomerInput, PersonalInfo, TimeWindow, Verification } from "../domain/types.js";

const ts = (d: Date): Timestamp => timestampFromDate(d);
const opt = (s: string): string | undefined => (s === "" ? undefined : s);

function addressToPb(a: Address | null): AddressPb | undefined {
  if (!a) return undefined;
  return create(AddressSchema, {
    line1: a.line1 ?? "",
    line2: a.line2 ?? "",
    city: a.city ?? "",
    state: a.state ?? "",
    postalCode: a.postalCode ?? "",
    country: a.country ?? "",
  });
}

/** Empty proto strings are absent fields. */
export function addressFromPb(a: AddressPb | undefined): Partial<Address> | undefined {
  if (!a) return undefined;
  return dropEmpty({ line1: a.line1, line2: a.line2, city: a.city, state: a.state, postalCode: a.postalCode, country: a.country });
}

function dropEmpty<T extends Record<string, string>>(o: T): Partial<T> {
  const out: Partial<T> = {};
  for (const [k, v] of Object.entries(o) as [keyof T, string][]) if (v !== "") out[k] = v as T[keyof T];
  return out;
}

function businessInfoToPb(b: BusinessInfo | null): BusinessInfoPb | undefined {
  if (!b) return undefined;
  return create(BusinessInfoSchema, {
    legalName: b.legalName ?? "",
    registrationNumber: b.registrationNumber ?? "",
    taxId: b.taxId ?? "",
    incorporatedOn: b.incorporatedOn ?? "",
    entityType: b.entityType ?? "",
    countryOfIncorporation: b.countryOfIncorporation ?? "",
    doingBusinessAs: b.doingBusinessAs ?? "",
    website: b.website ?? "",
  });
}

export function customerToPb(c: Customer): CustomerPb {
  return create(CustomerSchema, {
    id: c.id,
    platformId: c.platformId,
    platformCustomerId: c.platformCustomerId,
    customerType: c.customerType,
    umaAddress: c.umaAddress,
    region: c.region,
    currencies: c.currencies,
    email: c.email,
    createdAt: ts(c.createdAt),
    updatedAt: ts(c.updatedAt),
    isDeleted: c.deletedAt !== null,
    verificationStatus: c.verificationStatus,
    fullName: c.fullName,
    birthDate: c.birthDate,
    nationality: c.nationality,
    address: addressToPb(c.address),
    businessInfo: businessInfoToPb(c.businessInfo),
    contactVerification: contactVerificationToPb(c),
  });
}

function contactVerificationToPb(c: Customer) {
  const v = contactVerificationOf(c);
  return v && create(ContactVerificationSchema, { email: v.email ?? "", phone: v.phone ?? "" });
}

export function summaryToPb(c: Customer): CustomerSummary {
  return create(CustomerSummarySchema, {
    customerId: c.id,
    platformId: c.platformId,
    platformCustomerId: c.platformCustomerId,
    customerType: c.customerType,
    currencies: c.currencies,
    verificationStatus: c.verificationStatus,
    isDeleted: c.deletedAt !== null,
    umaAddress: c.umaAddress,
    createdAt: ts(c.createdAt),
    updatedAt: ts(c.updatedAt),
  });
}

export function customerInputFromPb(i: CustomerInputPb | undefined): CustomerInput {
  if (!i) return {};
  const b = i.businessInfo;
  return {
    platformCustomerId: i.platformCustomerId,
    customerType: i.customerType,
    umaAddress: i.umaAddress,
    region: i.region,
    currencies: i.currencies ? [...i.currencies.codes] : undefined,
    email: i.email,
    fullName: i.fullName,
    birthDate: i.birthDate,
    nationality: i.nationality,
    address: addressFromPb(i.address),
    businessInfo: b
      ? dropEmpty({
          legalName: b.legalName,
          registrationNumber: b.registrationNumber,
          taxId: b.taxId,
          incorporatedOn: b.incorporatedOn,
          entityType: b.entityType,
          countryOfIncorporation: b.countryOfIncorporation,
          doingBusinessAs: b.doingBusinessAs,
          website: b.website,
        })
      : undefined,
    verificationStatus: i.verificationStatus,
  };
}

export function verificationToPb(v: Verification): VerificationPb {
  return create(VerificationSchema, {
    id: v.id,
    platformId: v.platformId,
    customerId: v.customerId,
    verificationStatus: v.verificationStatus,
    errors: v.errors.map((e) => create(VerificationErrorSchema, e)),
    createdAt: ts(v.createdAt),
    updatedAt: ts(v.updatedAt),
  });
}

function personalInfoToPb(p: PersonalInfo): PersonalInfoPb {
  return create(PersonalInfoSchema, {
    firstName: p.firstName,
    lastName: p.lastName,
    middleName: p.middleName ?? "",
    birthDate: p.birthDate,
    nationality: p.nationality,
    address: addressToPb(p.address),
    idType: p.idType,
    identifier: p.identifier,
    email: p.email ?? "",
    phoneNumber: p.phoneNumber ?? "",
    countryOfIssuance: p.countryOfIssuance ?? "",
  });
}

export function personalInfoFromPb(p: PersonalInfoPb | undefined): Partial<PersonalInfo> {
  if (!p) return {};
  const { address, ...rest } = p;
  const flat = dropEmpty({
    firstName: rest.firstName,
    lastName: rest.lastName,
    middleName: rest.middleName,
    birthDate: rest.birthDate,
    nationality: rest.nationality,
    idType: rest.idType,
    identifier: rest.identifier,
    email: rest.email,
    phoneNumber: rest.phoneNumber,
    countryOfIssuance: rest.countryOfIssuance,
  }) as Partial<PersonalInfo>;
  const a = addressFromPb(address);
  return a ? { ...flat, address: a as Address } : flat;
}

export function ownerToPb(o: BeneficialOwner): BeneficialOwnerPb {
  return create(BeneficialOwnerSchema, {
    id: o.id,
    platformId: o.platformId,
    customerId: o.customerId,
    roles: o.roles,
    ownershipPercentage: o.ownershipPercentage,
    personalInfo: personalInfoToPb(o.personalInfo),
    kycStatus: o.kycStatus,
    createdAt: ts(o.createdAt),
    updatedAt: ts(o.updatedAt),
  });
}

export function invitationToPb(i: InvitationView): InvitationPb {
  return create(InvitationSchema, {
    code: i.code,
    platformId: i.platformId,
    createdAt: ts(i.createdAt),
    url: i.url,
    inviterUma: i.inviterUma,
    inviterCustomerId: i.inviterCustomerId,
    status: i.status,
    claimedAt: i.claimedAt ? ts(i.claimedAt) : undefined,
    expiresAt: i.expiresAt ? ts(i.expiresAt) : undefined,
    inviteeUma: i.inviteeUma,
    firstName: i.firstName,
    amountToSend: i.amountToSend ?? undefined,
    amountCurrency: i.amountCurrency,
  });
}

export function windowFromPb(r: TimeRange | undefined): TimeWindow | undefined {
  if (!r) return undefined;
  return { after: r.after ? timestampDate(r.after) : undefined, before: r.before ? timestampDate(r.before) : undefined };
}

export { opt };

export function kycLinkPageToPb(p: KycLinkPage): KycLinkPagePb {
  return create(KycLinkPageSchema, {
    customerId: p.customerId,
    customerType: p.customerType,
    displayName: p.displayName,
    verificationStatus: p.verificationStatus,
    expiresAt: ts(p.expiresAt),
    redirectUrl: p.redirectUrl,
    documents: p.documents.map(documentToPb),
  });
}
