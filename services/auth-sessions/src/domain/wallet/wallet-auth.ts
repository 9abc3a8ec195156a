import { createHash, randomBytes } from "node:crypto";
import { AppError, errors, newId, type Clock } from "@corridor/kit";
import type { AtRestCipher } from "../../crypto/at-rest.js";
import { canonicalJson } from "../../crypto/canonical.js";
import { newSessionKeyPair, sealToPublicKey } from "../../crypto/keys.js";
import { hashOtp, newOtpCode, otpMatches } from "./otp.js";
import {
  OidcRejected,
  PasskeyRejected,
  type AccountDirectory,
  type Mailer,
  type OidcVerifier,
  type PasskeyVerifier,
  type RelyingParty,
  type WalletStore,
  type WalletTransact,
} from "./ports.js";
import { checkSignedRequest, consumeSignedRetry, issueSignedChallenge } from "./signed-retry.js";
import {
  LIMITS,
  REASONS,
  SANDBOX_MAGIC,
  type AuthMethod,
  type Credential,
  type CredentialMaterial,
  type IssuedSession,
  type SignedChallenge,
  type SignedRetry,
  type WalletSession,
} from "./types.js";
import * as v from "./validation.js";

export interface WalletAuthDeps {
  transact: WalletTransact;
  clock: Clock;
  accounts: AccountDirectory;
  mailer: Mailer;
  oidc: OidcVerifier;
  passkeys: PasskeyVerifier;
  /** The deployment's relying party, for platforms that configured none of their own. */
  defaultRelyingParty: RelyingParty;
  walletKeys: AtRestCipher;
  /** True when walletKeys uses the built-in development key: production wallets are then refused. */
  walletKeysInsecure?: boolean;
}

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

export type VerifyInput = {
  platformId: string;
  credentialId: string;
  type: string;
  otp?: string;
  oidcToken?: string;
  clientPublicKey?: string;
  assertion?: PasskeyAssertionInput;
  requestId?: string;
};

export const toAuthMethod = (c: Credential): AuthMethod => ({
  id: c.id,
  accountId: c.accountId,
  type: c.type,
  nickname: c.nickname,
  createdAt: c.createdAt,
  updatedAt: c.updatedAt,
});

const unauthorized = (reason: string, detail?: string) => errors.unauthorized(detail ? `${reason}: ${detail}` : reason, { reason });

const alreadyExists = (type: string) =>
  errors.badRequest(`${type}_CREDENTIAL_ALREADY_EXISTS`, `The account already has a ${type} credential (at most one per account)`);

/** A unique-index violation on the one-per-type index (a concurrent create won). */
function isOnePerTypeViolation(err: unknown): boolean {
  const e = err as { code?: string; message?: string; constraint?: string };
  return e?.code === "23505" || /wallet_credentials_one_per_type_idx/.test(String(e?.message ?? ""));
}

/**
 * Embedded-wallet authentication use cases: credentials, challenges, verification into sessions,
 * signed retries and wallet export. Other services (ledger) are asked before any transaction
 * opens; crypto happens outside transactions where it can.
 */
export function createWalletAuth(deps: WalletAuthDeps) {
  const { transact, clock, accounts, mailer, oidc, passkeys } = deps;

  async function environment(store: WalletStore, platformId: string) {
    const env = await store.environmentOf(platformId);
    if (!env) throw errors.notFound("Platform", platformId || undefined);
    return env;
  }

  /** The relying party passkeys of this platform are verified against (decisions §6). */
  async function relyingParty(store: WalletStore, platformId: string): Promise<RelyingParty> {
    return (await store.relyingPartyOf(platformId)) ?? deps.defaultRelyingParty;
  }

  async function requireCredential(store: WalletStore, platformId: string, id: string, forUpdate = false): Promise<Credential> {
    const c = await store.credentials.get(platformId, id, { forUpdate });
    if (!c) throw errors.notFound("AuthMethod", id);
    return c;
  }

  /** The challenge type of operations without a credential of their own: the latest session's, else the first credential's. */
  async function accountType(store: WalletStore, platformId: string, accountId: string): Promise<string> {
    const [session] = await store.sessions.listActive(platformId, accountId, clock.now());
    if (session) return session.type;
    const [first] = await store.credentials.listByAccount(platformId, accountId);
    return first?.type ?? "EMBEDDED_WALLET";
  }

  async function newOtp(store: WalletStore, c: Credential, now: Date): Promise<string> {
    const code = newOtpCode();
    await store.otps.put({
      credentialId: c.id,
      platformId: c.platformId,
      codeSha256: hashOtp(c.id, code),
      attempts: 0,
      createdAt: now,
      expiresAt: new Date(now.getTime() + LIMITS.otpMs),
    });
    return code;
  }

  /** A session key pair sealed to the client before any transaction opens. */
  async function sealedSessionKey(clientKey: Uint8Array) {
    const pair = newSessionKeyPair();
    const sealed = await sealToPublicKey(pair.secretKey, clientKey);
    pair.secretKey.fill(0);
    return { publicKey: pair.publicKeyCompressedHex, sealed };
  }

  async function insertSession(store: WalletStore, c: Credential, key: { publicKey: string; sealed: string }, now: Date): Promise<IssuedSession> {
    const session: WalletSession = {
      id: newId("Session"),
      platformId: c.platformId,
      accountId: c.accountId,
      credentialId: c.id,
      type: c.type,
      nickname: c.nickname,
      publicKey: key.publicKey,
      createdAt: now,
      updatedAt: now,
      expiresAt: new Date(now.getTime() + LIMITS.sessionMs),
      revokedAt: null,
    };
    await store.sessions.insert(session);
    return { ...session, encryptedSessionSigningKey: key.sealed };
  }

  async function sendOtp(c: Credential, code: string | undefined, environment: "SANDBOX" | "PRODUCTION") {
    if (code === undefined || c.material.type !== "EMAIL_OTP") return;
    await mailer.sendOtp(c.material.email, code, { platformId: c.platformId, credentialId: c.id, environment });
  }

  /**
   * EMAIL_OTP needs a way to reach the user: without a mail server a production platform gets 501
   * EMAIL_DELIVERY_NOT_CONFIGURED (checked before any code is drawn or anything is stored). Sandbox
   * platforms always may: the development mailer shows their codes in the log, marked as such.
   */
  function requireEmailDelivery(environment: "SANDBOX" | "PRODUCTION") {
    if (mailer.deliversTo(environment)) return;
    throw new AppError(
      "NOT_IMPLEMENTED",
      "EMAIL_DELIVERY_NOT_CONFIGURED",
      "This deployment has no mail server (CORRIDOR_SMTP_URL), so EMAIL_OTP codes cannot reach the users of production platforms; use PASSKEY or OAUTH credentials, or ask the operator to configure SMTP",
      { credentialType: "EMAIL_OTP" },
    );
  }

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
      const now = clock.now();

      // The proof of the new credential, checked on every call (first and signed retry).
      let nickname: string;
      let material: CredentialMaterial;
      if (type === "EMAIL_OTP") {
        nickname = signedBody.email as string;
        material = { type, email: nickname };
      } else if (type === "OAUTH") {
        try {
          const who = sandbox ? oidc.inspect(input.oidcToken!, now) : await oidc.verify(input.oidcToken!, now);
          nickname = who.email ?? who.subject;
          material = { type, issuer: who.issuer, subject: who.subject };
        } catch (err) {
          if (err instanceof OidcRejected) throw unauthorized(REASONS.oidc, err.message);
          throw err;
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
          return { credential, code };
        });
        if ("challenge" in outcome) return { challenge: outcome.challenge };
        await sendOtp(outcome.credential, outcome.code, env);
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
      return transact(async (store) => {
        const sandbox = (await environment(store, platformId)) === "SANDBOX";
        const now = clock.now();
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
      const outcome = await transact(async (store) => {
        const c = await requireCredential(store, platformId, credentialId, true);
        if (c.type === "OAUTH") {
          throw errors.badRequest("CHALLENGE_NOT_SUPPORTED", "OAUTH credentials need no challenge: call /verify with a fresh identity token");
        }
        const clientKey = c.type === "PASSKEY" ? v.clientPublicKey(clientPublicKeyHex) : undefined;
        const now = clock.now();
        if (c.lastChallengeAt) {
          const waitMs = c.lastChallengeAt.getTime() + LIMITS.challengeReissueMs - now.getTime();
          if (waitMs > 0) {
            const retryAfterSeconds = Math.ceil(waitMs / 1000);
            throw new AppError("RATE_LIMITED", "RATE_LIMITED", `One challenge per credential every 30 seconds; retry in ${retryAfterSeconds} s`, { retryAfterSeconds });
          }
        }
        if (c.type === "EMAIL_OTP") {
          const env = await environment(store, platformId);
          requireEmailDelivery(env);
          await store.credentials.setLastChallengeAt(platformId, c.id, now);
          return { credential: c, code: await newOtp(store, c, now), env };
        }
        await store.credentials.setLastChallengeAt(platformId, c.id, now);

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
      await sendOtp(outcome.credential, outcome.code, outcome.env);
      return { authMethod: toAuthMethod(outcome.credential) };
    },

    async verifyCredential(input: VerifyInput): Promise<IssuedSession> {
      const type = v.credentialType(input.type);
      const { platformId, credentialId } = input;
      const { credential, env, rp } = await transact(async (store) => ({
        env: await environment(store, platformId),
        credential: await requireCredential(store, platformId, credentialId),
        rp: await relyingParty(store, platformId),
      }));
      if (credential.type !== type) throw errors.invalidInput([{ field: "type", reason: `must be the credential's type, ${credential.type}` }]);
      const sandbox = env === "SANDBOX";

      if (type === "EMAIL_OTP") {
        v.required({ otp: input.otp });
        const key = await sealedSessionKey(v.clientPublicKey(input.clientPublicKey ?? ""));
        const outcome = await transact(async (store) => {
          const now = clock.now();
          const c = await requireCredential(store, platformId, credentialId, true);
          const otp = await store.otps.get(platformId, c.id);
          const magic = sandbox && input.otp === SANDBOX_MAGIC.otp;
          if (!magic) {
            if (!otp) return { failed: "no code is outstanding; call /challenge for a new one" };
            if (now.getTime() >= otp.expiresAt.getTime()) return { failed: "the code has expired; call /challenge for a new one" };
            if (otp.attempts >= LIMITS.otpAttempts) return { failed: "too many wrong attempts; call /challenge for a new code" };
            if (!otpMatches(c.id, input.otp!, otp.codeSha256)) {
              // Counted in a transaction that commits: the failure is answered after it.
              await store.otps.setAttempts(platformId, c.id, otp.attempts + 1);
              return { failed: "the code does not match" };
            }
          }
          if (otp) await store.otps.remove(platformId, c.id);
          return { session: await insertSession(store, c, key, now) };
        });
        if (outcome.failed !== undefined) throw unauthorized(REASONS.otp, outcome.failed);
        return outcome.session!;
      }

      if (type === "OAUTH") {
        v.required({ oidcToken: input.oidcToken });
        const clientKey = v.clientPublicKey(input.clientPublicKey ?? "");
        if (!(sandbox && input.oidcToken === SANDBOX_MAGIC.oidcToken)) {
          let who;
          try {
            who = await oidc.verify(input.oidcToken!, clock.now());
          } catch (err) {
            if (err instanceof OidcRejected) throw unauthorized(REASONS.oidc, err.message);
            throw err;
          }
          const m = credential.material;
          if (m.type !== "OAUTH" || m.issuer !== who.issuer || m.subject !== who.subject) {
            throw unauthorized(REASONS.oidc, "the token names another identity than this credential");
          }
        }
        const key = await sealedSessionKey(clientKey);
        return transact(async (store) => insertSession(store, await requireCredential(store, platformId, credentialId), key, clock.now()));
      }

      // PASSKEY
      if (!input.requestId) throw errors.invalidInput([{ field: "headers.Request-Id", reason: "is required: the requestId of the challenge" }]);
      const a = input.assertion;
      v.required({
        "assertion.credentialId": a?.credentialId,
        "assertion.clientDataJson": a?.clientDataJson,
        "assertion.authenticatorData": a?.authenticatorData,
        "assertion.signature": a?.signature,
      });
      const challenge = await transact((store) => store.passkeyChallenges.get(platformId, input.requestId!));
      const now = clock.now();
      if (!challenge || challenge.credentialId !== credentialId) throw unauthorized("Unknown Request-Id", "call /challenge and send its requestId");
      if (challenge.usedAt) throw unauthorized("Request-Id already used", "call /challenge again");
      if (now.getTime() >= challenge.expiresAt.getTime()) throw unauthorized("Passkey challenge expired", "call /challenge again");

      let newCounter: number | undefined;
      if (!(sandbox && a!.signature === SANDBOX_MAGIC.passkeySignature)) {
        const m = credential.material;
        if (m.type !== "PASSKEY" || !m.publicKey) throw unauthorized(REASONS.passkey, "this passkey's attestation was never verified");
        if (a!.credentialId !== m.credentialId) throw unauthorized(REASONS.passkey, "the assertion is for another passkey");
        try {
          ({ newCounter } = await passkeys.verifyAssertion({
            rp,
            expectedChallenge: challenge.challenge,
            credential: { credentialId: m.credentialId, publicKey: m.publicKey, counter: m.counter, transports: m.transports },
            assertion: a!,
          }));
        } catch (err) {
          if (err instanceof PasskeyRejected) throw unauthorized(REASONS.passkey, err.message);
          throw err;
        }
      }
      const key = await sealedSessionKey(Buffer.from(challenge.clientPublicKey, "hex"));
      return transact(async (store) => {
        const c = await requireCredential(store, platformId, credentialId, true);
        if (!(await store.passkeyChallenges.markUsed(platformId, challenge.id, now))) throw unauthorized("Request-Id already used", "call /challenge again");
        if (newCounter !== undefined && c.material.type === "PASSKEY") {
          await store.credentials.updateMaterial(platformId, c.id, { ...c.material, counter: newCounter }, now);
        }
        return insertSession(store, c, key, now);
      });
    },

    async listSessions(platformId: string, accountId: string): Promise<WalletSession[]> {
      v.required({ accountId });
      await accounts.requireEmbeddedWallet(platformId, accountId);
      return transact((store) => store.sessions.listActive(platformId, accountId, clock.now()));
    },

    async revokeSession(platformId: string, sessionId: string, retry?: SignedRetry): Promise<{ challenge?: SignedChallenge }> {
      return transact(async (store) => {
        const sandbox = (await environment(store, platformId)) === "SANDBOX";
        const now = clock.now();
        const body = canonicalJson({ sessionId });
        // A replayed, stale or foreign Request-Id is a 401 whatever became of the session.
        if (retry) await checkSignedRequest(store, { platformId, operation: "REVOKE_SESSION", body, retry, now });
        const session = await store.sessions.get(platformId, sessionId);
        if (!session || session.revokedAt) throw errors.notFound("Session", sessionId);
        const base = { platformId, accountId: session.accountId, operation: "REVOKE_SESSION", body, now };
        if (!retry) return { challenge: await issueSignedChallenge(store, { ...base, type: session.type }) };
        await consumeSignedRetry(store, { ...base, retry, sandbox });
        await store.sessions.revoke(platformId, sessionId, now);
        return {};
      });
    },

    async exportWallet(platformId: string, accountId: string, clientPublicKeyHex: string, retry?: SignedRetry) {
      const clientKey = v.clientPublicKey(clientPublicKeyHex);
      await accounts.requireEmbeddedWallet(platformId, accountId);
      const outcome = await transact(async (store) => {
        const sandbox = (await environment(store, platformId)) === "SANDBOX";
        if (!sandbox && deps.walletKeysInsecure) {
          // A production wallet key must never be protected by a key that ships in the source.
          throw new AppError("UNAVAILABLE", "WALLET_ENCRYPTION_NOT_CONFIGURED", "Wallet export for production platforms needs CORRIDOR_WALLET_ENCRYPTION_KEY to be configured by the operator");
        }
        const now = clock.now();
        const body = canonicalJson({ accountId, clientPublicKey: Buffer.from(clientKey).toString("hex") });
        const base = { platformId, accountId, operation: "EXPORT_WALLET", body, now };
        if (!retry) return { challenge: await issueSignedChallenge(store, { ...base, type: await accountType(store, platformId, accountId) }) };
        await consumeSignedRetry(store, { ...base, retry, sandbox });
        let sealedAtRest = await store.walletKeys.get(platformId, accountId);
        if (!sealedAtRest) {
          // The wallet key is made when first needed and only ever stored encrypted.
          const fresh = randomBytes(32);
          await store.walletKeys.insertIfAbsent(platformId, accountId, deps.walletKeys.encrypt(fresh, accountId), now);
          fresh.fill(0);
          sealedAtRest = (await store.walletKeys.get(platformId, accountId))!;
        }
        return { sealedAtRest };
      });
      if ("challenge" in outcome) return { challenge: outcome.challenge };
      const secret = deps.walletKeys.decrypt(outcome.sealedAtRest, accountId);
      const encryptedWalletCredentials = await sealToPublicKey(secret, clientKey);
      secret.fill(0);
      return { export: { id: accountId, encryptedWalletCredentials } };
    },

    /** For other services (quotes-fx's embedded-wallet execute): a challenge over their canonical body. */
    async createSignedChallenge(platformId: string, accountId: string, operation: string, body: string): Promise<SignedChallenge> {
      if (!/^[A-Z][A-Z0-9_]{0,63}$/.test(operation)) throw errors.invalidInput([{ field: "operation", reason: "must be UPPER_SNAKE" }]);
      await accounts.requireEmbeddedWallet(platformId, accountId);
      return transact(async (store) => {
        await environment(store, platformId);
        return issueSignedChallenge(store, { platformId, accountId, operation, body, type: await accountType(store, platformId, accountId), now: clock.now() });
      });
    },

    /** For other services: checks and consumes a retry; answers the signing session ("" for the sandbox magic value). */
    async verifySignedRetry(platformId: string, accountId: string, operation: string, retry: SignedRetry, body: string): Promise<{ sessionId: string }> {
      if (!retry.requestId || !retry.signature) throw errors.unauthorized("Send Request-Id and Service-Wallet-Signature", { reason: "Missing signed-retry headers" });
      return transact(async (store) => {
        const sandbox = (await environment(store, platformId)) === "SANDBOX";
        return consumeSignedRetry(store, { platformId, accountId, operation, body, retry, sandbox, now: clock.now() });
      });
    },
  };
}

export type WalletAuth = ReturnType<typeof createWalletAuth>;
