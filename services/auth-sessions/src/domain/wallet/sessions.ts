import { errors } from "@corridor/kit";
import { canonicalJson } from "./canonical.js";
import { oidcFailure, unauthorized, type WalletAuthDeps, type WalletContext } from "./context.js";
import { otpMatches } from "./otp.js";
import { OidcRejected, PasskeyRejected } from "./ports.js";
import { checkSignedRequest, consumeSignedRetry, issueSignedChallenge } from "./signed-retry.js";
import type { PasskeyAssertionInput } from "./credentials.js";
import { LIMITS, REASONS, SANDBOX_MAGIC, type IssuedSession, type SignedChallenge, type SignedRetry, type WalletSession } from "./types.js";
import * as v from "./validation.js";

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

/** Sessions: a verified credential becomes a session (its signing key sealed to the client); list, revoke. */
export function createSessions(deps: WalletAuthDeps, ctx: WalletContext) {
  const { transact, clock, accounts, oidc, passkeys } = deps;
  const { environment, relyingParty, requireCredential, sealedSessionKey, insertSession, platformNow } = ctx;
  return {
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
      const now = await platformNow(platformId);

      if (type === "EMAIL_OTP") {
        v.required({ otp: input.otp });
        const key = await sealedSessionKey(v.clientPublicKey(input.clientPublicKey ?? ""));
        const outcome = await transact(async (store) => {
          const c = await requireCredential(store, platformId, credentialId, true);
          const otp = await store.otps.get(platformId, c.id);
          const magic = sandbox && input.otp === SANDBOX_MAGIC.otp;
          if (!magic) {
            if (!otp) return { failed: "no code is outstanding; challenge the credential for a new one" };
            if (now.getTime() >= otp.expiresAt.getTime()) return { failed: "the code has expired; challenge the credential for a new one" };
            if (otp.attempts >= LIMITS.otpAttempts) return { failed: "too many wrong attempts; challenge the credential for a new code" };
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
            // The token's iat is the issuer's real time: checked against the service clock.
            who = await oidc.verify(input.oidcToken!, clock.now(), platformId);
          } catch (err) {
            oidcFailure(err);
          }
          const m = credential.material;
          if (m.type !== "OAUTH" || m.issuer !== who.issuer || m.subject !== who.subject) {
            oidcFailure(new OidcRejected("the token names another identity (iss and sub) than this credential", "SUBJECT_MISMATCH"));
          }
        }
        const key = await sealedSessionKey(clientKey);
        return transact(async (store) => insertSession(store, await requireCredential(store, platformId, credentialId), key, now));
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
      if (!challenge || challenge.credentialId !== credentialId) throw unauthorized("Unknown Request-Id", "challenge the credential and send its requestId");
      if (challenge.usedAt) throw unauthorized("Request-Id already used", "challenge the credential again");
      if (now.getTime() >= challenge.expiresAt.getTime()) throw unauthorized("Passkey challenge expired", "challenge the credential again");

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
        if (!(await store.passkeyChallenges.markUsed(platformId, challenge.id, now))) throw unauthorized("Request-Id already used", "challenge the credential again");
        if (newCounter !== undefined && c.material.type === "PASSKEY") {
          await store.credentials.updateMaterial(platformId, c.id, { ...c.material, counter: newCounter }, now);
        }
        return insertSession(store, c, key, now);
      });
    },

    async listSessions(platformId: string, accountId: string): Promise<WalletSession[]> {
      v.required({ accountId });
      await accounts.requireEmbeddedWallet(platformId, accountId);
      const now = await platformNow(platformId);
      return transact((store) => store.sessions.listActive(platformId, accountId, now));
    },

    async revokeSession(platformId: string, sessionId: string, retry?: SignedRetry): Promise<{ challenge?: SignedChallenge }> {
      const now = await platformNow(platformId);
      return transact(async (store) => {
        const sandbox = (await environment(store, platformId)) === "SANDBOX";
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

  };
}
