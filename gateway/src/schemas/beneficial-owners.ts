import { Type, type Static } from "typebox";
import { Iso8601, ListEnvelope, Ref, pagingQuery } from "./common.js";
import { AddressRef, CountryCode, KycStatusSchema, Text } from "./customers.js";

const RoleSchema = Type.Enum(["UBO", "DIRECTOR", "COMPANY_OFFICER", "CONTROL_PERSON", "TRUSTEE", "GENERAL_PARTNER"], { description: "A role in the business." });
const Roles = Type.Array(RoleSchema, { minItems: 1, maxItems: 6, uniqueItems: true, description: "The owner's roles; at least one, no repeats." });
const Percentage = Type.Number({
  minimum: 0,
  maximum: 100,
  description: "Ownership share in percent, 0 to 100, fractions allowed (12.5); the UBOs of one business total at most 100.",
});

const personalInfoFields = {
  firstName: Text("Given name."),
  lastName: Text("Family name. Sandbox: suffix 001 gives kycStatus PENDING, 002 REJECTED, any other APPROVED."),
  middleName: Type.Optional(Text("Middle name.")),
  birthDate: Type.String({ format: "date", description: "Date of birth (YYYY-MM-DD), not in the future." }),
  nationality: CountryCode("Nationality,"),
  address: AddressRef("Residential address."),
  idType: Type.Enum(["SSN", "ITIN", "EIN", "NON_US_TAX_ID"], { description: "Kind of identifier." }),
  identifier: Text("The identification number.", 64),
  email: Type.Optional(Type.String({ format: "email", maxLength: 255, description: "Email address." })),
  phoneNumber: Type.Optional(Type.String({ pattern: "^\\+[1-9][0-9]{1,14}$", description: "E.164 phone number, for example +14155550100." })),
  countryOfIssuance: Type.Optional(CountryCode("Country that issued the identifier,")),
};

export const PersonalInfoSchema = Type.Object(personalInfoFields, {
  $id: "PersonalInfo",
  additionalProperties: false,
  description: "Who a beneficial owner is.",
});

const PersonalInfoPatch = Type.Partial(Type.Object(personalInfoFields, { additionalProperties: false }), {
  additionalProperties: false,
  description: "Personal fields to change; absent fields stay as they are (an address replaces the whole address).",
});

export const BeneficialOwnerSchema = Type.Object(
  {
    id: Type.String({ description: "BeneficialOwner:<uuidv7>." }),
    customerId: Type.String({ description: "The business customer." }),
    roles: Type.Array(RoleSchema, { description: "The owner's roles." }),
    ownershipPercentage: Type.Number({ minimum: 0, maximum: 100, description: "Ownership share in percent, 0 to 100 (12.5 is a valid share)." }),
    personalInfo: Ref("PersonalInfo", "Who the owner is."),
    kycStatus: KycStatusSchema,
    createdAt: Iso8601("When the owner was added."),
    updatedAt: Iso8601("When the owner last changed."),
  },
  { $id: "BeneficialOwner", description: "An owner, director or officer of a business customer; its KYC runs when it is added." },
);

export const CreateBeneficialOwnerBody = Type.Object(
  {
    customerId: Type.String({ pattern: "^Customer:[0-9a-fA-F-]{1,64}$", description: "The BUSINESS customer." }),
    roles: Roles,
    ownershipPercentage: Type.Optional({ ...Percentage, default: 0 }),
    personalInfo: Type.Unsafe<Static<typeof PersonalInfoSchema>>(Type.Ref("PersonalInfo", { description: "Who the owner is." })),
  },
  { additionalProperties: false, description: "A new beneficial owner." },
);

export const UpdateBeneficialOwnerBody = Type.Object(
  { roles: Type.Optional(Roles), ownershipPercentage: Type.Optional(Percentage), personalInfo: Type.Optional(PersonalInfoPatch) },
  { additionalProperties: false, description: "Fields to change; absent fields stay as they are." },
);

export const BeneficialOwnerIdParams = Type.Object(
  { beneficialOwnerId: Type.String({ pattern: "^BeneficialOwner:[0-9a-fA-F-]{1,64}$", description: "BeneficialOwner:<uuidv7>." }) },
  { description: "Path parameters naming a beneficial owner." },
);

export const ListBeneficialOwnersQuery = Type.Object(
  { ...pagingQuery, customerId: Type.String({ minLength: 1, maxLength: 128, description: "The business customer (required)." }) },
  { description: "Filter and paging of GET /beneficial-owners." },
);

export const BeneficialOwnerListSchema = ListEnvelope(Ref("BeneficialOwner", "An owner."), "One page of owners, newest first.");

export const beneficialOwnerSchemas = [PersonalInfoSchema, BeneficialOwnerSchema];
