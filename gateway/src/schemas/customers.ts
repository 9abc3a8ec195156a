import { Type, type Static } from "typebox";
import { Iso8601, ListEnvelope, Ref, pagingQuery, timeWindowQuery } from "./common.js";

export const CountryCode = (description: string) => Type.String({ pattern: "^[A-Z]{2}$", description: `${description} ISO 3166-1 alpha-2, for example US.` });
export const Text = (description: string, maxLength = 255) => Type.String({ minLength: 1, maxLength, description });
const CurrencyCode = Type.String({ pattern: "^[A-Z]{3,5}$", description: "A currency code the platform supports." });
export const UmaAddress = (description: string) => Type.String({ pattern: "^\\$[A-Za-z0-9._+-]{1,64}@[A-Za-z0-9-]+(\\.[A-Za-z0-9-]+)+$", maxLength: 255, description });
export const KycStatusSchema = Type.Enum(["UNVERIFIED", "PENDING", "APPROVED", "REJECTED"], {
  description: "UNVERIFIED until verified; PENDING while a verification runs; then APPROVED or REJECTED.",
});
const CustomerTypeSchema = Type.Enum(["INDIVIDUAL", "BUSINESS"], { description: "INDIVIDUAL or BUSINESS; decides which fields apply." });

export const AddressSchema = Type.Object(
  {
    line1: Text("Street and number."),
    line2: Type.Optional(Text("Second address line.")),
    city: Type.Optional(Text("City.")),
    state: Type.Optional(Text("State or province.")),
    postalCode: Text("Postal code.", 32),
    country: CountryCode("Country,"),
  },
  { $id: "Address", additionalProperties: false, description: "A postal address." },
);
export const AddressRef = (description: string) => Type.Unsafe<Static<typeof AddressSchema>>(Type.Ref("Address", { description }));

const businessInfoFields = {
  legalName: Text("Registered legal name."),
  registrationNumber: Type.Optional(Text("Company registration number. Sandbox: suffix 001 gives kybStatus PENDING, 002 REJECTED, any other APPROVED.", 64)),
  taxId: Type.Optional(Text("Tax identification number.", 64)),
  incorporatedOn: Type.Optional(Type.String({ format: "date", description: "Date of incorporation (YYYY-MM-DD)." })),
  entityType: Type.Optional(Text("Legal form, for example LLC or CORPORATION.", 64)),
  countryOfIncorporation: Type.Optional(CountryCode("Country of incorporation,")),
  country: Type.Optional(CountryCode("Grid's name for countryOfIncorporation (either may be sent; both answered): country of incorporation or registration,")),
  doingBusinessAs: Type.Optional(Text("Trading name.")),
  website: Type.Optional(Text("Web site.", 2048)),
};

export const BusinessInfoSchema = Type.Object(businessInfoFields, {
  $id: "BusinessInfo",
  additionalProperties: false,
  description: "Business details of a BUSINESS customer; legalName is required.",
});
const BusinessInfoPatch = Type.Object(
  { ...businessInfoFields, legalName: Type.Optional(businessInfoFields.legalName) },
  { additionalProperties: false, description: "Business fields to change; absent fields stay as they are." },
);

const commonInput = {
  platformCustomerId: Type.Optional(Text("Your own id of the customer; unique among your live customers.")),
  umaAddress: Type.Optional(UmaAddress("UMA address ($handle@domain); unique among your live customers. Defaults to $<platformCustomerId>@<your umaDomain>.")),
  region: Type.Optional(CountryCode("Region,")),
  currencies: Type.Optional(
    Type.Array(CurrencyCode, { maxItems: 50, uniqueItems: true, description: "Currencies to enable; each must be a supported currency of the platform. Default: all of them." }),
  ),
  email: Type.Optional(Type.String({ format: "email", maxLength: 255, description: "Email address." })),
  fullName: Type.Optional(Text("INDIVIDUAL only: full legal name. Sandbox: suffix 001 gives kycStatus PENDING, 002 REJECTED, any other APPROVED.")),
  birthDate: Type.Optional(Type.String({ format: "date", description: "INDIVIDUAL only: date of birth (YYYY-MM-DD), not in the future." })),
  nationality: Type.Optional(CountryCode("INDIVIDUAL only: nationality,")),
  address: Type.Optional(AddressRef("Postal address (replaced as a whole).")),
  kycStatus: Type.Optional(KycStatusSchema),
  kybStatus: Type.Optional(KycStatusSchema),
};

export const CreateCustomerBody = Type.Object(
  {
    ...commonInput,
    customerType: CustomerTypeSchema,
    platformCustomerId: Text("Your own id of the customer; unique among your live customers."),
    businessInfo: Type.Optional(Type.Unsafe<Static<typeof BusinessInfoSchema>>(Type.Ref("BusinessInfo", { description: "BUSINESS only (required for them)." }))),
  },
  {
    additionalProperties: false,
    description:
      "A new customer, discriminated by customerType. INDIVIDUAL: fullName, birthDate, nationality, address, kycStatus. BUSINESS: businessInfo (legalName required), address, kybStatus. kycStatus/kybStatus other than UNVERIFIED only for regulated financial institutions.",
  },
);

export const UpdateCustomerBody = Type.Object(
  {
    ...commonInput,
    customerType: Type.Optional(
      Type.Enum(["INDIVIDUAL", "BUSINESS"], { description: "The customer's type, as Grid's SDK sends it: it must equal the customer's own (a different one → 400 INVALID_INPUT); it never changes." }),
    ),
    businessInfo: Type.Optional(BusinessInfoPatch),
  },
  { additionalProperties: false, description: "Fields to change; absent fields stay as they are. customerType may be sent but cannot change." },
);

const ContactVerificationStatusSchema = Type.Union([Type.Literal("PENDING"), Type.Literal("VERIFIED")], { description: "PENDING (not yet confirmed) or VERIFIED." });

export const CustomerSchema = Type.Object(
  {
    id: Type.String({ description: "Customer:<uuidv7>." }),
    platformCustomerId: Type.String({ description: "Your own id of the customer." }),
    customerType: CustomerTypeSchema,
    umaAddress: Type.Optional(Type.String({ description: "UMA address; absent when the platform has no UMA domain and none was given." })),
    region: Type.Optional(Type.String({ description: "ISO 3166-1 alpha-2 region." })),
    currencies: Type.Array(Type.String({ description: "A currency code." }), { description: "Enabled currencies." }),
    email: Type.Optional(Type.String({ description: "Email address." })),
    createdAt: Iso8601("When the customer was created."),
    updatedAt: Iso8601("When the customer last changed."),
    isDeleted: Type.Boolean({ description: "Whether the customer was deleted (soft)." }),
    kycStatus: Type.Optional(KycStatusSchema),
    kybStatus: Type.Optional(KycStatusSchema),
    fullName: Type.Optional(Type.String({ description: "INDIVIDUAL: full legal name." })),
    birthDate: Type.Optional(Type.String({ description: "INDIVIDUAL: date of birth." })),
    nationality: Type.Optional(Type.String({ description: "INDIVIDUAL: nationality." })),
    address: Type.Optional(AddressRef("Postal address.")),
    businessInfo: Type.Optional(Type.Unsafe<Static<typeof BusinessInfoSchema>>(Type.Ref("BusinessInfo", { description: "BUSINESS: business details." }))),
    contactVerification: Type.Optional(
      Type.Object(
        {
          email: Type.Optional(ContactVerificationStatusSchema),
          phone: Type.Optional(ContactVerificationStatusSchema),
        },
        {
          additionalProperties: false,
          description:
            "Verification state of each contact on file (Grid's shape): a channel is present when the customer has that contact, PENDING until confirmed with POST /customers/{customerId}/verify-email (/confirm), VERIFIED while the contact equals the one confirmed. Absent when the customer has no contact to verify.",
        },
      ),
    ),
  },
  { $id: "Customer", description: "A customer: individuals carry kycStatus, businesses kybStatus and businessInfo." },
);

export const CustomerIdParams = Type.Object(
  { customerId: Type.String({ pattern: "^Customer:[0-9a-fA-F-]{1,64}$", description: "Customer:<uuidv7>." }) },
  { description: "Path parameters naming a customer." },
);

export const ListCustomersQuery = Type.Object(
  {
    ...pagingQuery,
    platformCustomerId: Type.Optional(Text("Only the customer with this platform customer id.")),
    customerType: Type.Optional(CustomerTypeSchema),
    ...timeWindowQuery,
    region: Type.Optional(CountryCode("Only customers of this region,")),
    currency: Type.Optional(Type.String({ pattern: "^[A-Z]{3,5}$", description: "Only customers with this currency enabled." })),
    umaAddress: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: "Only the customer with this UMA address." })),
    isIncludingDeleted: Type.Optional(Type.Boolean({ default: false, description: "Include deleted customers (default false)." })),
  },
  { description: "Filters and paging of GET /customers." },
);

export const CustomerListSchema = ListEnvelope(Ref("Customer", "A customer."), "One page of customers, newest first.");

export const customerSchemas = [AddressSchema, BusinessInfoSchema, CustomerSchema];
