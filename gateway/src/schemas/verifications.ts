import { Type } from "typebox";
import { Iso8601, ListEnvelope, Ref, pagingQuery } from "./common.js";

export const VerificationStatusSchema = Type.Enum(["RESOLVE_ERRORS", "PENDING", "APPROVED", "REJECTED"], {
  description: "RESOLVE_ERRORS when data is missing (see errors; the customer's status is unchanged); otherwise the outcome, also applied to the customer.",
});

export const VerificationSchema = Type.Object(
  {
    id: Type.String({ description: "Verification:<uuidv7>." }),
    customerId: Type.String({ description: "The verified customer." }),
    verificationStatus: VerificationStatusSchema,
    errors: Type.Array(
      Type.Object(
        {
          type: Type.Enum(["MISSING_FIELD", "INVALID_FIELD", "MISSING_BENEFICIAL_OWNER"], { description: "Kind of problem." }),
          field: Type.String({ description: "The customer field concerned, for example businessInfo.registrationNumber or beneficialOwners." }),
          reason: Type.String({ description: "What must be fixed." }),
        },
        { description: "One thing to fix before the customer can be verified." },
      ),
      { description: "Every problem found; empty unless verificationStatus is RESOLVE_ERRORS." },
    ),
    createdAt: Iso8601("When the verification ran."),
    updatedAt: Iso8601("When it last changed."),
  },
  { $id: "Verification", description: "A KYC (individual) or KYB (business) verification of a customer." },
);

export const CreateVerificationBody = Type.Object(
  { customerId: Type.String({ pattern: "^Customer:[0-9a-fA-F-]{1,64}$", description: "The customer to verify." }) },
  { additionalProperties: false, description: "Whom to verify." },
);

export const VerificationIdParams = Type.Object(
  { verificationId: Type.String({ pattern: "^Verification:[0-9a-fA-F-]{1,64}$", description: "Verification:<uuidv7>." }) },
  { description: "Path parameters naming a verification." },
);

export const ListVerificationsQuery = Type.Object(
  {
    ...pagingQuery,
    customerId: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: "Only this customer's verifications." })),
    verificationStatus: Type.Optional(VerificationStatusSchema),
  },
  { description: "Filters and paging of GET /verifications." },
);

export const VerificationListSchema = ListEnvelope(Ref("Verification", "A verification."), "One page of verifications, newest first.");

export const verificationSchemas = [VerificationSchema];
