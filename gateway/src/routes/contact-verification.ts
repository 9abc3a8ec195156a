import { Type } from "typebox";
import { principalOf } from "../auth.js";
import { customerToJson } from "../mappers/customers.js";
import { errorResponses, Ref } from "../schemas/common.js";
import { CustomerIdParams } from "../schemas/customers.js";
import type { Api, RouteDeps } from "./types.js";

const ConfirmBody = Type.Object(
  { code: Type.String({ minLength: 1, maxLength: 16, description: "The one-time code the customer received (6 digits). Sandbox platforms: 123456 (Grid's sandbox code) also confirms, after a send." }) },
  { additionalProperties: false, description: "The code to confirm." },
);

const CHANNELS = [
  { path: "email", channel: "EMAIL", noun: "email address", how: "by email (the deployment's mail server, as EMAIL_OTP codes)" },
  { path: "phone", channel: "PHONE", noun: "phone number", how: "by SMS (no SMS gateway ships: customers carry no phone number, so this answers 409 CONTACT_VERIFICATION_NOT_REQUIRED)" },
] as const;

/**
 * Grid's contact verification: POST /customers/{customerId}/verify-email|verify-phone send a
 * one-time code, /confirm checks it and answers the Customer with contactVerification VERIFIED.
 * Needs MANAGE (customers).
 */
export function contactVerificationRoutes(app: Api, { clients }: RouteDeps): void {
  for (const { path, channel, noun, how } of CHANNELS) {
    app.post(
      `/customers/:customerId/verify-${path}`,
      {
        config: { permission: "MANAGE" },
        schema: {
          summary: `Send a ${path} verification code`,
          description: `Sends (or re-sends) a 6-digit one-time code to the customer's ${noun} ${how}; it confirms within 5 minutes and 5 wrong tries, and a new send replaces the outstanding code. One send per 30 seconds; a code sent again inherits the wrong tries of the live code it replaces, and once those are used up no new code is sent until that one expired (429 RATE_LIMITED with Retry-After): resending never buys guesses. The code is never written to any log. Sandbox platforms: nothing is sent when the deployment has no mail server, and the magic code 123456 (Grid's) confirms. A production platform of a deployment that cannot deliver → 400 ${channel === "EMAIL" ? "EMAIL_DELIVERY_NOT_CONFIGURED" : "SMS_DELIVERY_NOT_CONFIGURED"}. No ${noun} on file → 409 CONTACT_VERIFICATION_NOT_REQUIRED; already verified → 409 CONTACT_ALREADY_VERIFIED. Answers 204. Needs MANAGE.`,
          tags: ["Customers"],
          params: CustomerIdParams,
          response: { 204: Type.Null({ description: "Code sent." }), ...errorResponses },
        },
      },
      async (request, reply) => {
        const { platformId } = principalOf(request);
        await clients.customersKyc.sendContactVerification({ platformId, customerId: request.params.customerId, channel });
        return reply.code(204).send(null);
      },
    );

    app.post(
      `/customers/:customerId/verify-${path}/confirm`,
      {
        config: { permission: "MANAGE" },
        schema: {
          summary: `Confirm a ${path} verification code`,
          description: `Checks the code sent by verify-${path}: 200 the Customer with contactVerification.${path} VERIFIED (it stays VERIFIED while the ${noun} on file is the one confirmed). Wrong code → 400 INVALID_VERIFICATION_CODE (details.attemptsLeft); the sixth try → 400 VERIFICATION_ATTEMPTS_EXCEEDED whatever the code (the limit holds under concurrent tries); older than 5 minutes → 400 VERIFICATION_CODE_EXPIRED; none sent → 400 VERIFICATION_CODE_NOT_SENT. Needs MANAGE.`,
          tags: ["Customers"],
          params: CustomerIdParams,
          body: ConfirmBody,
          response: { 200: Ref("Customer", "The customer, verified on this channel."), ...errorResponses },
        },
      },
      async (request) => {
        const { platformId } = principalOf(request);
        const res = await clients.customersKyc.confirmContactVerification({ platformId, customerId: request.params.customerId, channel, code: request.body.code });
        return customerToJson(res.customer);
      },
    );
  }
}
