import { createHash, randomBytes } from "node:crypto";
import { AppError, errors, newId } from "@corridor/kit";
import { canonicalJson } from "./canonical.js";
import { alreadyExists, isOnePerTypeViolation, oidcFailure, toAuthMethod, unauthorized, type WalletAuthDeps, type WalletContext } from "./context.js";
import { PasskeyRejected } from "./ports.js";
import { checkSignedRequest, consumeSignedRetry, issueSignedChallenge } from "./signed-retry.js";
import { LIMITS, REASONS, type AuthMethod, type Credential, type CredentialMaterial, type SignedChallenge, type SignedRetry } from "./types.js";
import * as v from "./validation.js";

export interface PasskeyAttestationInput {
  credentialId: string;
  clientDataJson: string;
  attestationObject: string;
  transports: string[];
}

export interface PasskeyAssertionInput {
  credentialId: string;
  clientDataJson: string;
  authenticatorData: string;
  signature: string;
  userHandle?: string;
}

export type CreateCredentialInput = {
  platformId: string;
  accountId: string;
  type: string;
  email?: string;
  oidcToken?: string;
  nickname?: string;
  challenge?: string;
  attestation?: PasskeyAttestationInput;
  retry?: SignedRetry;
};

/** Credentials of an embedded wallet: add (signed by an existing one), list, revoke, challenge. */
export function createCredentials(deps: WalletAuthDeps, ctx: WalletContext) {
  const { transact, clock, accounts, oidc, passkeys } = deps;
  const { environment, relyingParty, requireCredential, newOtp, sendOtp, requireEmailDelivery, platformNow } = ctx;
  return {
    async createCredential(input: CreateCredentialInput): Promise<{ authMethod?: AuthMethod; challenge?: SignedChallenge }> {
      const type = v.credentialType(input.type);
      v.required({ accountId: input.accountId });
      let signedBody: Record<string, unknown>;
      if (type === "EMAIL_OTP") {
        signedBody = { type, accountId: input.accountId, email: v.email(input.email ?? "") };
      } else if (type === "OAUTH") {
        v.required({ oidcToken: input.oidcToken });
        signedBody = { type, accountId: input.accountId, oidcToken: input.oidcToken };
      } else {
        const a = input.attestation;
        v.required({
          challenge: input.challenge,
          "attestation.credentialId": a?.credentialId,
          "attestation.clientDataJson": a?.clientDataJson,
          "attestation.attestationObject": a?.attestationObject,
        });
        v.base64url({
          challenge: input.challenge!,
          "attestation.credentialId": a!.credentialId,
          "attestation.clientDataJson": a!.clientDataJson,
          "attestation.attestationObject": a!.attestationObject,
        });
        signedBody = { type, accountId: input.accountId, nickname: v.nickname(input.nickname ?? ""), challenge: input.challenge, attestation: { ...a, transports: a!.transports } };
      }

      await accounts.requireEmbeddedWallet(input.platformId, input.accountId);
      const { env, rp } = await transact(async (s) => ({ env: await environment(s, input.platformId), rp: await relyingParty(s, input.platformId) }));
      if (type === "EMAIL_OTP") requireEmailDelivery(env);
      const sandbox = env === "SANDBOX";
      const now = await platformNow(input.platformId);

      // The proof of the new credential, checked on every call (first and signed retry).
      let nickname: string;
      let material: CredentialMaterial;
      if (type === "EMAIL_OTP") {
        nickname = signedBody.email as string;
        material = { type, email: nickname };
      } else if (type === "OAUTH") {
        try {
          // The token's iat is the issuer's real time: checked against the service clock.
          const who = sandbox ? oidc.inspect(input.oidcToken!, clock.now()) : await oidc.verify(input.oidcToken!, clock.now(), input.platformId);
          // The credential is bound to the issuer and subject: a later verify must name the same.
          nickname = who.email ?? who.subject;
          material = { type, issuer: who.issuer, subject: who.subject };
        } catch (err) {
          oidcFailure(err);
        }
      } else {
        nickname = signedBody.nickname as string;
        const a = input.attestation!;
        try {
          const reg = await passkeys.verifyRegistration({ rp, challenge: input.challenge!, attestation: { ...a, transports: a.transports } });
          material = { type, credentialId: reg.credentialId, publicKey: reg.publicKey, counter: reg.counter, transports: a.transports };
        } catch (err) {
          if (!(err instanceof PasskeyRejected)) throw err;
          // Sandbox keeps an attestation it cannot verify; such a passkey verifies with the magic value only.
          if (!sandbox) throw unauthorized("Invalid passkey attestation", err.message);
          material = { type, credentialId: a.credentialId, counter: 0, transports: a.transports };
        }
      }

      const body = canonicalJson(signedBody);
      try {
        const outcome = await transact(async (store) => {
          const existing = await store.credentials.listByAccount(input.platformId, input.accountId);
          if (type !== "OAUTH" && existing.some((c) => c.type === type)) throw alreadyExists(type);
          if (
            material.type === "OAUTH" &&
            existing.some((c) => c.material.type === "OAUTH" && c.material.issuer === material.issuer && c.material.subject === material.subject)
          ) {
            throw alreadyExists("OAUTH");
          }
          if (existing.length > 0) {
            if (!input.retry) {
              return { challenge: await issueSignedChallenge(store, { platformId: input.platformId, accountId: input.accountId, operation: "ADD_CREDENTIAL", body, type, now }) };
            }
            await consumeSignedRetry(store, { platformId: input.platformId, accountId: input.accountId, operation: "ADD_CREDENTIAL", body, retry: input.retry, sandbox, now });
          }
          const credential: Credential = {
            id: newId("AuthMethod"),
            platformId: input.platformId,
            accountId: input.accountId,
            type,
            nickname,
            material,
            lastChallengeAt: null,
            createdAt: now,
            updatedAt: now,
          };
          await store.credentials.insert(credential);
          const code = type === "EMAIL_OTP" ? await newOtp(store, credential, now) : undefined;
          // Mailed before the commit: a code the mail server would not take leaves no credential
          // behind (the request answers 503 EMAIL_DELIVERY_FAILED and may be retried as it is).
          await sendOtp(credential, code, env);
          return { credential };
        });
        if ("challenge" in outcome) return { challenge: outcome.challenge };
        return { authMethod: toAuthMethod(outcome.credential) };
      } catch (err) {
        if (!(err instanceof AppError) && isOnePerTypeViolation(err)) throw alreadyExists(type);
        throw err;
      }
    },

    async listCredentials(platformId: string, accountId: string): Promise<AuthMethod[]> {
      v.required({ accountId });
      await accounts.requireEmbeddedWallet(platformId, accountId);
      return transact(async (store) => (await store.credentials.listByAccount(platformId, accountId)).map(toAuthMethod));
    },

    async revokeCredential(platformId: string, credentialId: string, retry?: SignedRetry): Promise<{ challenge?: SignedChallenge }> {
      const now = await platformNow(platformId);
      return transact(async (store) => {
        const sandbox = (await environment(store, platformId)) === "SANDBOX";
        const body = canonicalJson({ credentialId });
        // A replayed, stale or foreign Request-Id is a 401 whatever became of the credential.
        if (retry) await checkSignedRequest(store, { platformId, operation: "REVOKE_CREDENTIAL", body, retry, now });
        const c = await requireCredential(store, platformId, credentialId, true);
        const all = await store.credentials.listByAccount(platformId, c.accountId);
        if (all.length <= 1) {
          throw errors.badRequest("LAST_CREDENTIAL", "An account must keep at least one credential; add another before revoking this one");
        }
        const base = { platformId, accountId: c.accountId, operation: "REVOKE_CREDENTIAL", body, now };
        if (!retry) return { challenge: await issueSignedChallenge(store, { ...base, type: c.type }) };
        await consumeSignedRetry(store, { ...base, retry, sandbox, excludeCredentialId: c.id });
        await store.credentials.markDeleted(platformId, c.id, now);
        // Sessions of a revoked credential stop signing at once.
        await store.sessions.revokeByCredential(platformId, c.id, now);
        return {};
      });
    },

    async challengeCredential(platformId: string, credentialId: string, clientPublicKeyHex: string) {
      const now = await platformNow(platformId);
      const outcome = await transact(async (store) => {
        const c = await requireCredential(store, platformId, credentialId, true);
        if (c.type === "OAUTH") {
          throw errors.badRequest("CHALLENGE_NOT_SUPPORTED", "OAUTH credentials need no challenge: verify it with a fresh identity token");
        }
        const clientKey = c.type === "PASSKEY" ? v.clientPublicKey(clientPublicKeyHex) : undefined;
        // The re-issue limit is abuse protection (mail, challenges), not an expiry the platform
        // sees: it runs on the service clock, so advancing a sandbox clock does not lift it.
        const real = clock.now();
        if (c.lastChallengeAt) {
          const waitMs = c.lastChallengeAt.getTime() + LIMITS.challengeReissueMs - real.getTime();
          if (waitMs > 0) {
            const retryAfterSeconds = Math.ceil(waitMs / 1000);
            throw new AppError("RATE_LIMITED", "RATE_LIMITED", `One challenge per credential every 30 seconds; retry in ${retryAfterSeconds} s`, { retryAfterSeconds });
          }
        }
        if (c.type === "EMAIL_OTP") {
          const env = await environment(store, platformId);
          requireEmailDelivery(env);
          await store.credentials.setLastChallengeAt(platformId, c.id, real);
          // Mailed before the commit: if the mail server does not take it, neither the new code nor
          // the 30-second re-issue limit is recorded, so the caller may retry at once.
          await sendOtp(c, await newOtp(store, c, now), env);
          return { credential: c };
        }
        await store.credentials.setLastChallengeAt(platformId, c.id, real);

        const requestId = newId("Request");
        const expiresAt = new Date(now.getTime() + LIMITS.passkeyChallengeMs);
        const clientPublicKey = Buffer.from(clientKey!).toString("hex");
        // The WebAuthn challenge commits to the session-creation payload, client key included.
        const payload = canonicalJson({ requestId, credentialId: c.id, clientPublicKey, expiresAt: expiresAt.toISOString(), nonce: randomBytes(16).toString("hex") });
        const challenge = createHash("sha256").update(payload).digest("base64url");
        await store.passkeyChallenges.insert({ id: requestId, platformId, credentialId: c.id, challenge, clientPublicKey, createdAt: now, expiresAt, usedAt: null });
        return { passkeyChallenge: { challenge, requestId, expiresAt } };
      });
      if ("passkeyChallenge" in outcome) return { passkeyChallenge: outcome.passkeyChallenge };
      return { authMethod: toAuthMethod(outcome.credential) };
    },

  };
}
