import { AppError } from "@corridor/kit";
import { principalOf } from "../auth.js";
import { quoteJson } from "../mappers/quotes-fx.js";
import { errorResponses } from "../schemas/common.js";
import { QuoteParams, QuoteSchema, ScaAuthorizationBody, ScaChallengeSchema } from "../schemas/quotes-fx.js";
import { ExternalAccountIdParams } from "../schemas/external-accounts.js";
import { isoFromTimestamp } from "@corridor/kit/rest-json";
import type { ScaChallenge } from "@corridor/proto/corridor/auth_sessions/v1/sca_service_pb.js";
import { Type } from "typebox";

const BeneficiaryTrustStartSchema = Type.Object(
  {
    whitelistedId: Type.String({ description: "The beneficiary handle: Corridor's is the external account id. Informational; confirm names the account in its path." }),
    scaChallenge: Type.Optional(ScaChallengeSchema),
  },
  { description: "The SCA challenge to satisfy on the confirm call (Grid's BeneficiaryTrustStart)." },
);
const BeneficiaryTrustConfirmBody = Type.Object(
  {
    challengeId: Type.Optional(Type.Union([Type.String({ maxLength: 128, description: "The start's scaChallenge.id; omitted: the latest challenge." }), Type.Null()])),
    code: Type.Optional(Type.Union([Type.String({ maxLength: 16, description: "The six-digit one-time code (sandbox: always 123456)." }), Type.Null()])),
    passkeyAssertion: Type.Optional(Type.Union([Type.Object({}, { additionalProperties: true, description: "A WebAuthn assertion (not issued by Corridor)." }), Type.Null()])),
    origin: Type.Optional(Type.Union([Type.String({ maxLength: 512, description: "The WebAuthn origin of passkeyAssertion." }), Type.Null()])),
  },
  { description: "Confirms trusting or untrusting a beneficiary with the SCA proof (Grid's BeneficiaryTrustConfirmRequest)." },
);
const BeneficiaryTrustConfirmSchema = Type.Object(
  { trusted: Type.Boolean({ description: "True after a trust, false after an untrust." }) },
  { description: "The result of a confirm-trust / confirm-untrust call." },
);

const challengeJson = (c: ScaChallenge | undefined) =>
  c ? { id: c.id, expiresAt: isoFromTimestamp(c.expiresAt), factor: c.factor, availableFactors: [...c.availableFactors], ...(c.purpose ? { purpose: c.purpose } : {}) } : undefined;
import type { Api, RouteDeps } from "./types.js";

const tags = ["Strong Customer Authentication"];

/** The code of an ScaAuthorization: Corridor issues one-time-code (SMS_OTP) challenges only. */
function codeOf(body: { code?: string | null; passkeyAssertion?: object | null }): string {
  if (body.code) return body.code;
  const reason = body.passkeyAssertion ? "is required: the challenge's factor is SMS_OTP (a one-time code), not PASSKEY" : "is required: the one-time code the customer received";
  throw new AppError("INVALID", "INVALID_INPUT", `body.code: ${reason}`, { errors: [{ field: "body.code", reason }] });
}

/** Strong customer authentication (docs/sca.md): quote authorization, and trusting beneficiaries. */
export function scaRoutes(app: Api, { clients }: RouteDeps): void {
  for (const [verb, trust] of [
    ["trust", true],
    ["untrust", false],
  ] as const) {
    app.post(
      `/customers/external-accounts/:externalAccountId/${verb}`,
      {
        config: { permission: "TRANSACT" },
        schema: {
          summary: trust ? "Start trusting a beneficiary" : "Start untrusting a beneficiary",
          description: `${trust ? "Begins trusting a customer's external account, so quotes paying it need no SCA challenge" : "Begins removing the trusted mark from a customer's external account, so quotes paying it need SCA again"}: answers the scaChallenge whose code was sent to the customer; finish with POST /customers/external-accounts/{externalAccountId}/${verb}/confirm. 409 SCA_NOT_REQUIRED for customers outside SCA-regulated regions (and for the platform's own accounts); 429 RATE_LIMITED within 30 seconds of the last code. Needs TRANSACT.`,
          tags,
          params: ExternalAccountIdParams,
          response: { 200: BeneficiaryTrustStartSchema, ...errorResponses },
        },
      },
      async (request) => {
        const { platformId } = principalOf(request);
        const accountId = request.params.externalAccountId;
        const { account } = await clients.ledger.getExternalAccount({ platformId, owner: "CUSTOMER", accountId });
        if (!account?.customerId) throw new AppError("CONFLICT", "SCA_NOT_REQUIRED", "The platform's own external accounts need no strong customer authentication", { id: accountId });
        const res = await clients.sca.startTrust({ platformId, customerId: account.customerId, externalAccountId: accountId, trust });
        return { whitelistedId: accountId, scaChallenge: challengeJson(res.challenge) };
      },
    );

    app.post(
      `/customers/external-accounts/:externalAccountId/${verb}/confirm`,
      {
        config: { permission: "TRANSACT" },
        schema: {
          summary: trust ? "Confirm trusting a beneficiary" : "Confirm untrusting a beneficiary",
          description: `Finishes the ${verb} with the one-time code (sandbox: 123456) and, optionally, the start's challengeId: 200 {trusted: ${trust}}. 400 SCA_CODE_INVALID (details.attemptsLeft), SCA_CHALLENGE_EXPIRED, SCA_ATTEMPTS_EXCEEDED; 409 SCA_NOT_PENDING without a live challenge (start first). Needs TRANSACT.`,
          tags,
          params: ExternalAccountIdParams,
          body: BeneficiaryTrustConfirmBody,
          response: { 200: BeneficiaryTrustConfirmSchema, ...errorResponses },
        },
      },
      async (request) => {
        const { platformId } = principalOf(request);
        const accountId = request.params.externalAccountId;
        // The account must still be the platform's (404 EXTERNAL_ACCOUNT_NOT_FOUND otherwise).
        await clients.ledger.getExternalAccount({ platformId, owner: "CUSTOMER", accountId });
        const res = await clients.sca.confirmTrust({ platformId, externalAccountId: accountId, trust, code: codeOf(request.body), challengeId: request.body.challengeId ?? "" });
        return { trusted: res.trusted };
      },
    );
  }

  app.post(
    "/quotes/:quoteId/authorize",
    {
      config: { permission: "TRANSACT" },
      schema: {
        summary: "Authorize a quote's SCA challenge",
        description:
          "Satisfies the strong-customer-authentication challenge of a quote in PENDING_AUTHORIZATION (customers in SCA-regulated regions paying a destination they have not trusted; docs/sca.md) with the one-time code the customer received (sandbox: always 123456). 200 the quote: PENDING (a REALTIME_FUNDING quote now with its paymentInstructions), or executed when it was created with immediatelyExecute. 400 SCA_CODE_INVALID (details.attemptsLeft), SCA_CHALLENGE_EXPIRED, SCA_ATTEMPTS_EXCEEDED (5 wrong codes); 409 SCA_NOT_PENDING when the quote waits for no challenge, 409 QUOTE_EXPIRED. Needs TRANSACT.",
        tags,
        params: QuoteParams,
        body: ScaAuthorizationBody,
        response: { 200: QuoteSchema, ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const res = await clients.quotesFx.authorizeQuote({ platformId, quoteId: request.params.quoteId, code: codeOf(request.body) });
      return quoteJson(res.quote);
    },
  );

  app.post(
    "/quotes/:quoteId/authorize/resend",
    {
      config: { permission: "TRANSACT" },
      schema: {
        summary: "Resend a quote's SCA challenge code",
        description:
          "Sends a fresh one-time code for the challenge of a PENDING_AUTHORIZATION quote (the same challenge: its expiresAt is not extended, and wrong codes already tried still count). 204. 429 RATE_LIMITED within 30 seconds of the last code (Retry-After); 409 SCA_NOT_PENDING when the quote waits for no live challenge. Needs TRANSACT.",
        tags,
        params: QuoteParams,
        response: { 204: { type: "null", description: "Code sent." }, ...errorResponses },
      },
    },
    async (request, reply) => {
      const { platformId } = principalOf(request);
      await clients.quotesFx.resendQuoteAuthorization({ platformId, quoteId: request.params.quoteId });
      return reply.code(204).send(null);
    },
  );
}
