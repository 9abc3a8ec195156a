import { ConnectError } from "@connectrpc/connect";
import { publicErrorFromConnect } from "../http-status.js";
import { principalOf } from "../auth.js";
import { authMethodToJson, passkeyChallengeToJson, requestIdOf, sessionToJson, signedChallengeToJson, signedRetryOf } from "../mappers/wallet-auth.js";
import { errorResponses } from "../schemas/common.js";
import {
  AccountQuery,
  AuthMethodSchema,
  ChallengeBody,
  CreateCredentialBody,
  CredentialIdParams,
  PasskeyAuthChallengeSchema,
  SessionIdParams,
  SessionSchema,
  SessionSummarySchema,
  SignedChallengeSchema,
  VerifyBody,
} from "../schemas/wallet-auth.js";
import { Type } from "typebox";
import type { Api, RouteDeps } from "./types.js";

const tags = ["Embedded wallet authentication"];
const signedHeaders = "Signed retry: repeat the same request with headers Service-Wallet-Signature (or Grid-Wallet-Signature) and Request-Id.";

/**
 * Credentials and sessions of embedded-wallet accounts (WalletAuthService). Permissions: reads
 * VIEW; challenge and verify TRANSACT (they log a wallet user in to sign payments); adding or
 * revoking credentials and revoking sessions MANAGE. The wallet signature is the user's own
 * authorization on top of the token's.
 */
export function authCredentialRoutes(app: Api, { clients }: RouteDeps): void {
  const wallet = clients.walletAuth;

  app.post(
    "/auth/credentials",
    {
      config: { permission: "MANAGE" },
      schema: {
        summary: "Register a credential",
        description: `Registers an EMAIL_OTP, OAUTH or PASSKEY credential on an EMBEDDED_WALLET account. The first credential answers 201; when the account has one, the first call answers 202 with a signed-retry challenge. ${signedHeaders} EMAIL_OTP on a production platform of a deployment without a mail server → 400 EMAIL_DELIVERY_NOT_CONFIGURED (codes are never logged); a code the mail server will not take → 503 EMAIL_DELIVERY_FAILED or 400 EMAIL_UNDELIVERABLE, with nothing stored. Needs MANAGE.`,
        tags,
        body: CreateCredentialBody,
        response: { 201: AuthMethodSchema, 202: SignedChallengeSchema, ...errorResponses },
      },
    },
    async (request, reply) => {
      const { platformId } = principalOf(request);
      const b = request.body;
      const res = await wallet.createCredential({
        platformId,
        accountId: b.accountId,
        type: b.type,
        email: b.email ?? "",
        oidcToken: b.oidcToken ?? "",
        nickname: b.nickname ?? "",
        challenge: b.challenge ?? "",
        attestation: b.attestation,
        signedRetry: signedRetryOf(request),
      });
      if (res.result.case === "challenge") return reply.code(202).send(signedChallengeToJson(res.result.value));
      return reply.code(201).send(authMethodToJson(res.result.value));
    },
  );

  app.get(
    "/auth/credentials",
    {
      schema: {
        summary: "List an account's credentials",
        description: "Every credential of the account, oldest first; not paginated. Needs VIEW.",
        tags,
        querystring: AccountQuery,
        response: { 200: Type.Object({ data: Type.Array(AuthMethodSchema, { description: "The credentials." }) }, { description: "The credentials." }), ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const res = await wallet.listCredentials({ platformId, accountId: request.query.accountId });
      return { data: res.authMethods.map(authMethodToJson) };
    },
  );

  app.delete(
    "/auth/credentials/:credentialId",
    {
      config: { permission: "MANAGE" },
      schema: {
        summary: "Revoke a credential",
        description: `First call: 202 challenge. ${signedHeaders} The signature must come from a session of another credential on the account; 204 when revoked (its sessions end too). Revoking the only credential: 400. Needs MANAGE.`,
        tags,
        params: CredentialIdParams,
        response: { 202: SignedChallengeSchema, 204: Type.Null({ description: "Revoked." }), ...errorResponses },
      },
    },
    async (request, reply) => {
      const { platformId } = principalOf(request);
      const res = await wallet.revokeCredential({ platformId, credentialId: request.params.credentialId, signedRetry: signedRetryOf(request) });
      if (res.challenge) return reply.code(202).send(signedChallengeToJson(res.challenge));
      return reply.code(204).send(null);
    },
  );

  app.post(
    "/auth/credentials/:credentialId/challenge",
    {
      config: { permission: "TRANSACT" },
      // Grid's clients send no body for an EMAIL_OTP challenge: no body means no options.
      preValidation: async (request) => {
        request.body ??= {};
      },
      schema: {
        summary: "Challenge a credential",
        description:
          "EMAIL_OTP: sends a fresh code and answers the AuthMethod (a production platform of a deployment without a mail server → 400 EMAIL_DELIVERY_NOT_CONFIGURED; a code the mail server will not take → 503 EMAIL_DELIVERY_FAILED or 400 EMAIL_UNDELIVERABLE). PASSKEY: needs clientPublicKey and answers a PasskeyAuthChallenge. One challenge per credential per 30 s, else 429 with Retry-After. The body may be omitted (EMAIL_OTP needs none). Needs TRANSACT.",
        tags,
        params: CredentialIdParams,
        body: Type.Optional(ChallengeBody),
        response: { 200: Type.Union([AuthMethodSchema, PasskeyAuthChallengeSchema], { description: "AuthMethod (EMAIL_OTP) or PasskeyAuthChallenge (PASSKEY)." }), ...errorResponses },
      },
    },
    async (request, reply) => {
      const { platformId } = principalOf(request);
      try {
        const res = await wallet.challengeCredential({
          platformId,
          credentialId: request.params.credentialId,
          clientPublicKey: request.body?.clientPublicKey ?? "",
        });
        return res.result.case === "passkeyChallenge" ? passkeyChallengeToJson(res.result.value) : authMethodToJson(res.result.value);
      } catch (err) {
        // The 429's wait travels in details.retryAfterSeconds; HTTP says it with Retry-After.
        if (err instanceof ConnectError) {
          const { body } = publicErrorFromConnect(err);
          const wait = body.details?.retryAfterSeconds;
          if (body.status === 429 && typeof wait === "number") reply.header("retry-after", String(wait));
        }
        throw err;
      }
    },
  );

  app.post(
    "/auth/credentials/:credentialId/verify",
    {
      config: { permission: "TRANSACT" },
      schema: {
        summary: "Verify a credential and open a session",
        description:
          "EMAIL_OTP {otp, clientPublicKey}; OAUTH {oidcToken, clientPublicKey}; PASSKEY {assertion} with header Request-Id from /challenge. Answers the session with its signing key sealed to the client key; sessions last 15 minutes. Needs TRANSACT.",
        tags,
        params: CredentialIdParams,
        body: VerifyBody,
        response: { 200: SessionSchema, ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const b = request.body;
      const res = await wallet.verifyCredential({
        platformId,
        credentialId: request.params.credentialId,
        type: b.type,
        otp: b.otp ?? "",
        oidcToken: b.oidcToken ?? "",
        clientPublicKey: b.clientPublicKey ?? "",
        assertion: b.assertion,
        requestId: requestIdOf(request),
      });
      return sessionToJson(res.session, true);
    },
  );

  app.get(
    "/auth/sessions",
    {
      schema: {
        summary: "List an account's active sessions",
        description: "Sessions neither expired nor revoked, newest first; not paginated. Needs VIEW.",
        tags,
        querystring: AccountQuery,
        response: { 200: Type.Object({ data: Type.Array(SessionSummarySchema, { description: "The sessions." }) }, { description: "The sessions." }), ...errorResponses },
      },
    },
    async (request) => {
      const { platformId } = principalOf(request);
      const res = await wallet.listSessions({ platformId, accountId: request.query.accountId });
      return { data: res.sessions.map((s) => sessionToJson(s, false)) };
    },
  );

  app.delete(
    "/auth/sessions/:sessionId",
    {
      config: { permission: "MANAGE" },
      schema: {
        summary: "Revoke a session",
        description: `First call: 202 challenge. ${signedHeaders} 204 when revoked. Needs MANAGE.`,
        tags,
        params: SessionIdParams,
        response: { 202: SignedChallengeSchema, 204: Type.Null({ description: "Revoked." }), ...errorResponses },
      },
    },
    async (request, reply) => {
      const { platformId } = principalOf(request);
      const res = await wallet.revokeSession({ platformId, sessionId: request.params.sessionId, signedRetry: signedRetryOf(request) });
      if (res.challenge) return reply.code(202).send(signedChallengeToJson(res.challenge));
      return reply.code(204).send(null);
    },
  );
}
