import { principalOf } from "../auth.js";
import { verificationToJson } from "../mappers/verifications.js";
import { Ref, errorResponses } from "../schemas/common.js";
import { CreateVerificationBody, ListVerificationsQuery, VerificationIdParams, VerificationListSchema } from "../schemas/verifications.js";
import { listEnvelope, pageOf } from "./list.js";
import type { Api, RouteDeps } from "./types.js";

const tags = ["Customers"];

export function verificationRoutes(app: Api, { clients }: RouteDeps): void {
  app.post(
    "/verifications",
    {
      config: { permission: "MANAGE" },
      schema: {
        summary: "Verify a customer",
        description:
          "Runs KYC (individual) or KYB (business). Missing data → verificationStatus RESOLVE_ERRORS with errors[] (the customer stays as it was); otherwise the outcome becomes the customer's kycStatus/kybStatus. Sandbox: the suffix of fullName (individuals) or businessInfo.registrationNumber (businesses) decides — 001 PENDING, 002 REJECTED, else APPROVED. Production: complete data goes to the operator's KYC review queue (a business's open owners too) and the verification answers PENDING, the customer PENDING, until the operator approves (APPROVED), rejects (REJECTED, the reason in errors) or asks for more information (RESOLVE_ERRORS with the reason; verify again to resubmit). Asking again while a review waits answers the same PENDING verification. A regulated production platform → 400 KYC_MANAGED_BY_PLATFORM (it sets kycStatus itself). An APPROVED or REJECTED customer → 400. Needs MANAGE.",
        tags,
        body: CreateVerificationBody,
        response: { 200: Ref("Verification", "The verification."), ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const res = await clients.customersKyc.createVerification({ platformId, customerId: request.body.customerId });
      return verificationToJson(res.verification);
    },
  );

  app.get(
    "/verifications",
    {
      schema: {
        summary: "List verifications",
        description: "Pages through verifications, newest first. Needs VIEW.",
        tags,
        querystring: ListVerificationsQuery,
        response: { 200: VerificationListSchema, ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const q = request.query;
      const res = await clients.customersKyc.listVerifications({
        platformId,
        page: pageOf(q),
        customerId: q.customerId ?? "",
        verificationStatus: q.verificationStatus ?? "",
      });
      return listEnvelope(res.verifications.map(verificationToJson), res.pageInfo);
    },
  );

  app.get(
    "/verifications/:verificationId",
    {
      schema: {
        summary: "Get a verification",
        description: "Needs VIEW.",
        tags,
        params: VerificationIdParams,
        response: { 200: Ref("Verification", "The verification."), ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const res = await clients.customersKyc.getVerification({ platformId, verificationId: request.params.verificationId });
      return verificationToJson(res.verification);
    },
  );
}
