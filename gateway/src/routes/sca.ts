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
          "Satisfies the strong-customer-authentication challenge of a quote in PENDING_AUTHORIZATION (customers in SCA-regulated regions paying a destination they have not trusted; docs/sca.md) with the one-time code the customer received (sandbox: always 123456). 200 the quote: PENDING (a REALTIME_FUNDING quote now with its paymentInstructions), or executed when it was created with immediatelyExecute. Its transaction moves from PENDING_AUTHORIZATION to PENDING with it (OUTGOING_PAYMENT_PENDING webhook). 400 SCA_CODE_INVALID (details.attemptsLeft), SCA_CHALLENGE_EXPIRED, SCA_ATTEMPTS_EXCEEDED (5 wrong codes); 409 SCA_NOT_PENDING when the quote waits for no challenge, 409 QUOTE_EXPIRED. Needs TRANSACT.",
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

const CustomerQuery = Type.Object({
  customerId: Type.String({ minLength: 1, maxLength: 128, description: "The customer (Customer:<id> of the platform)." }),
});
const FactorEnum = Type.Union([Type.Literal("SMS_OTP"), Type.Literal("TOTP"), Type.Literal("PASSKEY")], {
  description: "An SCA factor (Grid's ScaFactor). Corridor issues SMS_OTP (a one-time code, no enrolment; delivered like EMAIL_OTP codes, docs/sca.md) and TOTP; PASSKEY is refused with 400 SCA_FACTOR_NOT_SUPPORTED.",
});
const ScaFactorListSchema = Type.Object(
  { factors: Type.Array(Type.Object({ factor: FactorEnum }, { description: "An enrolled factor (Grid's ScaFactorView; no credentialId: Corridor issues no passkeys)." }), { description: "SMS_OTP always; TOTP once confirmed." }) },
  { description: "The customer's SCA factors (Grid's ScaFactorList)." },
);
const FactorEnrollBody = Type.Object({ type: FactorEnum }, { description: "The factor to enrol (Grid's ScaFactorEnrollRequestOneOf): TOTP." });
const TotpEnrollmentStartSchema = Type.Object(
  {
    type: Type.Literal("TOTP", { description: "The factor being enrolled." }),
    secret: Type.String({ description: "The TOTP shared secret, Base32 (thread it back on POST /sca/factors/confirm)." }),
    secretBase32Encoded: Type.String({ description: "The same secret, Base32, for manual entry into an authenticator app." }),
    totpUri: Type.String({ description: "The otpauth:// provisioning URI (the QR code's payload)." }),
  },
  { description: "What the customer's authenticator app needs (Grid's TotpEnrollmentStart)." },
);
const FactorConfirmBody = Type.Object(
  {
    type: FactorEnum,
    secret: Type.Optional(Type.String({ maxLength: 128, description: "TOTP: the start's secret." })),
    code: Type.Optional(Type.String({ maxLength: 16, description: "TOTP: the authenticator's current code (sandbox: 123456 too)." })),
  },
  { additionalProperties: true, description: "The proof that finishes an enrolment (Grid's ScaFactorConfirmRequestOneOf)." },
);
const TotpEnrollmentConfirmSchema = Type.Object(
  {
    type: Type.Literal("TOTP", { description: "The factor enrolled." }),
    recoveryCodes: Type.Array(Type.String(), { description: "One-time recovery codes, shown once; each is accepted once in place of a TOTP code at POST /sca/login/complete." }),
  },
  { description: "The enrolled TOTP factor's recovery codes (Grid's TotpEnrollmentConfirmResponse)." },
);
const LoginStartBody = Type.Object({ factor: FactorEnum }, { description: "The factor to log in with (Grid's ScaLoginStartRequest)." });
const LoginStartSchema = Type.Object(
  {
    factor: FactorEnum,
    challengeId: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: "SMS_OTP: the challenge to echo on complete." })),
    expiresAt: Type.Optional(Type.Union([Type.String({ format: "date-time" }), Type.Null()], { description: "SMS_OTP: when the code expires." })),
  },
  { description: "The factor's login material (Grid's ScaLoginStart)." },
);
const LoginCompleteBody = Type.Object(
  {
    factor: FactorEnum,
    endUserIpAddress: Type.String({ minLength: 1, maxLength: 64, description: "The end user's IP address (required by Grid; Corridor has no risk engine to pass it to and does not store it)." }),
    challengeId: Type.Optional(Type.Union([Type.String({ maxLength: 128 }), Type.Null()], { description: "SMS_OTP: the start's challengeId." })),
    code: Type.Optional(Type.Union([Type.String({ maxLength: 32 }), Type.Null()], { description: "The one-time code (sandbox: 123456); for TOTP also an unused recovery code." })),
    passkeyAssertion: Type.Optional(Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], { description: "A WebAuthn assertion (not accepted: Corridor issues no passkeys)." })),
    origin: Type.Optional(Type.Union([Type.String({ maxLength: 512 }), Type.Null()], { description: "The WebAuthn origin of passkeyAssertion." })),
  },
  { description: "The proof that completes an SCA login (Grid's ScaLoginCompleteRequest)." },
);
const LoginCompleteSchema = Type.Object({ status: Type.String({ description: "SUCCESS." }) }, { description: "The login's status (Grid's ScaLoginComplete)." });
const RecordEventBody = Type.Object({ eventType: Type.String({ maxLength: 64, description: "FAILED_LOGIN_ATTEMPT or RESET_PASSWORD_COMPLETED (Grid's SecurityEventType)." }) }, { description: "A security event (Grid's RecordSecurityEventRequest)." });
const RecordEventSchema = Type.Object(
  {
    eventType: Type.Union([Type.Literal("FAILED_LOGIN_ATTEMPT"), Type.Literal("RESET_PASSWORD_COMPLETED")], { description: "The event recorded." }),
    suspended: Type.Boolean({ description: "Locked with no expiry (10 failed logins) until RESET_PASSWORD_COMPLETED is recorded." }),
    lockedUntil: Type.Union([Type.String({ format: "date-time" }), Type.Null()], { description: "While temporarily locked (every 5 failed logins, 15 minutes): when logins may resume." }),
    failedAttempts: Type.Integer({ description: "Failed logins since the last successful login or RESET_PASSWORD_COMPLETED." }),
  },
  { description: "The customer's login-security state (Grid's RecordSecurityEventResponse)." },
);

const ResetStartBody = Type.Object(
  {
    factor: FactorEnum,
    endUserIpAddress: Type.String({ minLength: 1, maxLength: 64, description: "The end user's IP address (required by Grid; Corridor has no risk engine to pass it to and does not store it)." }),
  },
  { description: "The lost factor to reset (Grid's TwoFactorResetStartRequest): SMS_OTP, or a confirmed TOTP." },
);
const ResetStartSchema = Type.Object(
  {
    resetId: Type.String({ description: "ScaFactorReset:<id>: pass it to the status and complete calls." }),
    livenessAccessToken: Type.Union([Type.String(), Type.Null()], { description: "The liveness check's opaque access token. A secret: it is also the credential of verificationLink." }),
    verificationLink: Type.Union([Type.String(), Type.Null()], { description: "The hosted liveness page for the end user (single reset; it carries the token). Production: the end user uploads a selfie the operator reviews against the customer's KYC documents. Sandbox: the page has pass / fail controls." }),
    expiresAt: Type.Union([Type.String({ format: "date-time" }), Type.Null()], { description: "The end of the reset window (24 hours on the platform's clock)." }),
  },
  { description: "The reset and the liveness handles to relay to the end user (Grid's TwoFactorResetStart)." },
);
const ResetParams = Type.Object({ resetId: Type.String({ minLength: 1, maxLength: 128, description: "The resetId the start answered." }) });
const ResetStatusSchema = Type.Object(
  {
    status: Type.Union(
      ["INITIATED", "PENDING_REVIEW", "LIVENESS_PASSED", "COMPLETED", "REJECTED", "EXPIRED"].map((v) => Type.Literal(v)),
      { description: "INITIATED (liveness not submitted), PENDING_REVIEW (the operator reviews the selfie), LIVENESS_PASSED (call complete), and the final COMPLETED, REJECTED (liveness failed), EXPIRED (the window closed) — Grid's TwoFactorResetState." },
    ),
    factor: Type.Optional(FactorEnum),
    expiresAt: Type.Optional(Type.String({ format: "date-time", description: "The end of the reset window." })),
  },
  { description: "The reset's status (Grid's TwoFactorResetStatus)." },
);
const ResetCompleteBody = Type.Object(
  {
    endUserIpAddress: Type.String({ minLength: 1, maxLength: 64, description: "The end user's IP address (required by Grid; not stored)." }),
    mobile: Type.Optional(
      Type.Union([
        Type.Object(
          {
            countryCode: Type.String({ maxLength: 8, description: "The dialling code with its leading + (e.g. +33)." }),
            number: Type.String({ maxLength: 32, description: "The national number, 4 to 14 digits." }),
          },
          { description: "SMS_OTP resets: the new mobile number, enrolled by the completion (required for them, ignored for TOTP)." },
        ),
        Type.Null(),
      ]),
    ),
  },
  { description: "Completes a reset (Grid's TwoFactorResetCompleteRequest)." },
);

const scaNote = "Only for customers in SCA-regulated regions (409 SCA_NOT_REQUIRED otherwise); 423 ACCOUNT_LOCKED while the customer's SCA login is locked (docs/sca.md).";

/** Grid's /sca/* factor, login and security-event routes (docs/sca.md). */
export function scaFactorRoutes(app: Api, { clients }: RouteDeps): void {
  app.get(
    "/sca/factors",
    {
      config: { permission: "VIEW" },
      schema: { summary: "List enrolled SCA factors", description: `The customer's SCA factors: SMS_OTP always, TOTP once confirmed. ${scaNote} Needs VIEW.`, tags, querystring: CustomerQuery, response: { 200: ScaFactorListSchema, ...errorResponses } },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const res = await clients.sca.listFactors({ platformId, customerId: request.query.customerId });
      return { factors: res.factors.map((factor) => ({ factor })) };
    },
  );

  app.post(
    "/sca/factors",
    {
      config: { permission: "MANAGE" },
      schema: {
        summary: "Start SCA factor enrollment",
        description: `Draws a TOTP shared secret for the customer's authenticator app; finish with POST /sca/factors/confirm. 400 SCA_FACTOR_NOT_SUPPORTED for PASSKEY (Corridor issues no WebAuthn credentials) and SMS_OTP (needs no enrolment); 409 SCA_FACTOR_ALREADY_ENROLLED once a TOTP factor is confirmed. ${scaNote} Needs MANAGE.`,
        tags,
        querystring: CustomerQuery,
        body: FactorEnrollBody,
        response: { 200: TotpEnrollmentStartSchema, ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const res = await clients.sca.startFactorEnrollment({ platformId, customerId: request.query.customerId, factor: request.body.type });
      return { type: "TOTP" as const, secret: res.secret, secretBase32Encoded: res.secretBase32Encoded, totpUri: res.totpUri };
    },
  );

  app.post(
    "/sca/factors/confirm",
    {
      config: { permission: "MANAGE" },
      schema: {
        summary: "Confirm SCA factor enrollment",
        description: `Confirms a TOTP enrolment with the start's secret and the authenticator's current code (sandbox: 123456 too) and answers one-time recovery codes, shown once. 400 SCA_CODE_INVALID for a wrong code; 409 SCA_FACTOR_NOT_ENROLLED without a pending enrolment of that secret. ${scaNote} Needs MANAGE.`,
        tags,
        querystring: CustomerQuery,
        body: FactorConfirmBody,
        response: { 200: TotpEnrollmentConfirmSchema, ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const { type, secret, code } = request.body;
      if (type === "TOTP" && (!secret || !code)) {
        const missing = [!secret && "secret", !code && "code"].filter((f): f is string => !!f);
        throw new AppError("INVALID", "INVALID_INPUT", `body.${missing[0]}: is required for TOTP`, { errors: missing.map((f) => ({ field: `body.${f}`, reason: "is required for TOTP" })) });
      }
      const res = await clients.sca.confirmFactorEnrollment({ platformId, customerId: request.query.customerId, factor: type, secret: secret ?? "", code: code ?? "" });
      return { type: "TOTP" as const, recoveryCodes: [...res.recoveryCodes] };
    },
  );

  app.post(
    "/sca/login/start",
    {
      config: { permission: "TRANSACT" },
      schema: {
        summary: "Start an SCA login",
        description: `Starts an SCA login: SMS_OTP sends a one-time code (delivered like EMAIL_OTP codes; sandbox: 123456) and answers its challengeId and expiresAt (5 minutes; 429 RATE_LIMITED within 30 seconds of the last code); TOTP answers the factor (409 SCA_FACTOR_NOT_ENROLLED without a confirmed one). ${scaNote} Needs TRANSACT.`,
        tags,
        querystring: CustomerQuery,
        body: LoginStartBody,
        response: { 200: LoginStartSchema, ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const res = await clients.sca.startLogin({ platformId, customerId: request.query.customerId, factor: request.body.factor });
      const c = res.challenge;
      return { factor: res.factor as "SMS_OTP" | "TOTP", ...(c ? { challengeId: c.id, expiresAt: isoFromTimestamp(c.expiresAt) } : {}) };
    },
  );

  app.post(
    "/sca/login/complete",
    {
      config: { permission: "TRANSACT" },
      schema: {
        summary: "Complete an SCA login",
        description: `Completes the login with the code (SMS_OTP: with the start's challengeId; TOTP: the authenticator's code or an unused recovery code): 200 {status: SUCCESS}. A wrong code is 400 SCA_CODE_INVALID and counts as a failed login: every 5 lock the customer's SCA for 15 minutes, 10 suspend it (423 ACCOUNT_LOCKED); an SMS_OTP challenge also dies after 5 wrong codes (SCA_ATTEMPTS_EXCEEDED) or 5 minutes (SCA_CHALLENGE_EXPIRED). 409 SCA_NOT_PENDING when the challengeId is not the customer's live login challenge. ${scaNote} Needs TRANSACT.`,
        tags,
        querystring: CustomerQuery,
        body: LoginCompleteBody,
        response: { 200: LoginCompleteSchema, ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const body = request.body;
      const code = body.factor === "PASSKEY" ? "" : codeOf(body);
      const res = await clients.sca.completeLogin({ platformId, customerId: request.query.customerId, factor: body.factor, challengeId: body.challengeId ?? "", code });
      return { status: res.status };
    },
  );

  app.post(
    "/sca/factors/reset",
    {
      config: { permission: "MANAGE" },
      schema: {
        summary: "Start a 2FA reset",
        description: `Starts recovering a lost factor (SMS_OTP, or a confirmed TOTP: 409 SCA_FACTOR_NOT_ENROLLED otherwise; PASSKEY: 400 SCA_FACTOR_NOT_SUPPORTED) behind a liveness check: 201 with the resetId and the liveness handles to relay to the end user (livenessAccessToken, verificationLink; secrets). Poll GET /sca/factors/reset/{resetId} until LIVENESS_PASSED, then complete. Production platforms: the end user uploads a selfie on the verificationLink page and the operator approves or rejects it against the customer's KYC documents; sandbox platforms: the page has pass / fail controls (docs/sca.md). At most 5 starts per 24 hours per customer (429 RATE_LIMITED with Retry-After). ${scaNote} Needs MANAGE.`,
        tags,
        querystring: CustomerQuery,
        body: ResetStartBody,
        response: { 201: ResetStartSchema, ...errorResponses },
      },
    },
    async (request, reply) => {
      const { platformId } = principalOf(request);
      const res = await clients.sca.startFactorReset({ platformId, customerId: request.query.customerId, factor: request.body.factor });
      reply.code(201);
      return {
        resetId: res.resetId,
        livenessAccessToken: res.livenessAccessToken || null,
        verificationLink: res.verificationPath ? `${request.protocol}://${request.host}${res.verificationPath}` : null,
        expiresAt: res.expiresAt ? isoFromTimestamp(res.expiresAt) : null,
      };
    },
  );

  app.get(
    "/sca/factors/reset/:resetId",
    {
      config: { permission: "VIEW" },
      schema: {
        summary: "Get 2FA reset status",
        description: "The reset's status: INITIATED and PENDING_REVIEW (keep polling), LIVENESS_PASSED (call complete), COMPLETED, REJECTED, EXPIRED (final; start a new reset). 404 SCA_RESET_NOT_FOUND for another customer's or an unknown reset. Only for customers in SCA-regulated regions (409 SCA_NOT_REQUIRED otherwise). Needs VIEW.",
        tags,
        params: ResetParams,
        querystring: CustomerQuery,
        response: { 200: ResetStatusSchema, ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const res = await clients.sca.getFactorReset({ platformId, customerId: request.query.customerId, resetId: request.params.resetId });
      return { status: res.status as "INITIATED", factor: res.factor as "SMS_OTP" | "TOTP", expiresAt: isoFromTimestamp(res.expiresAt) };
    },
  );

  app.post(
    "/sca/factors/reset/:resetId/complete",
    {
      config: { permission: "MANAGE" },
      schema: {
        summary: "Complete a 2FA reset",
        description: `Completes a LIVENESS_PASSED reset: 204. TOTP: the authenticator is removed and the customer enrols a new one (POST /sca/factors). SMS_OTP: body.mobile is required and becomes the customer's enrolled number (one-time codes still go out by mail, docs/sca.md). 400 SCA_RESET_NOT_READY before liveness passed, 400 SCA_RESET_CLOSED once COMPLETED, REJECTED or EXPIRED (a reset is used once); 404 SCA_RESET_NOT_FOUND. ${scaNote} Needs MANAGE.`,
        tags,
        params: ResetParams,
        querystring: CustomerQuery,
        body: ResetCompleteBody,
        response: { 204: { type: "null", description: "Reset completed." }, ...errorResponses },
      },
    },
    async (request, reply) => {
      const { platformId } = principalOf(request);
      const m = request.body.mobile;
      await clients.sca.completeFactorReset({ platformId, customerId: request.query.customerId, resetId: request.params.resetId, mobileCountryCode: m?.countryCode ?? "", mobileNumber: m?.number ?? "" });
      return reply.code(204).send(null);
    },
  );

  app.post(
    "/sca/record-event",
    {
      config: { permission: "TRANSACT" },
      schema: {
        summary: "Record a security event",
        description: `Records FAILED_LOGIN_ATTEMPT (counts toward the lockout: every 5 lock the customer's SCA for 15 minutes, 10 suspend it) or RESET_PASSWORD_COMPLETED (clears the count, the lock and the suspension) and answers the customer's login-security state. Other event types: 400 INVALID_INPUT. Only for customers in SCA-regulated regions (409 SCA_NOT_REQUIRED otherwise). Needs TRANSACT.`,
        tags,
        querystring: CustomerQuery,
        body: RecordEventBody,
        response: { 200: RecordEventSchema, ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const res = await clients.sca.recordSecurityEvent({ platformId, customerId: request.query.customerId, eventType: request.body.eventType });
      return {
        eventType: res.eventType as "FAILED_LOGIN_ATTEMPT" | "RESET_PASSWORD_COMPLETED",
        suspended: res.suspended,
        lockedUntil: res.lockedUntil ? isoFromTimestamp(res.lockedUntil) : null,
        failedAttempts: res.failedAttempts,
      };
    },
  );
}
