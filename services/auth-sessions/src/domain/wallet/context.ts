import { AppError, errors, newId, platformTime, type Clock } from "@corridor/kit";
import { newSessionKeyPair, sealToPublicKey } from "./keys.js";
import { hashOtp, newOtpCode } from "./otp.js";
import { OidcIssuerUnavailable, OidcRejected, type AccountDirectory, type Mailer, type OidcVerifier, type PasskeyVerifier, type RelyingParty, type WalletStore, type WalletTransact } from "./ports.js";
import type { WalletKeyring } from "./at-rest.js";
import { LIMITS, REASONS, type AuthMethod, type Credential, type IssuedSession, type WalletSession } from "./types.js";

export interface WalletAuthDeps {
  transact: WalletTransact;
  /** The service clock: rate limits (challenge re-issue) and outside parties' clocks (OIDC `iat`) run on it. */
  clock: Clock;
  /**
   * A sandbox platform's sandbox clock (SandboxService.GetClock): every expiry a sandbox platform
   * sees (sessions, OTPs, passkey and signed-retry challenges) runs on it. Absent (tests without a
   * sandbox): sandbox platforms are on the service clock too.
   */
  sandboxNow?: (platformId: string) => Promise<Date>;
  accounts: AccountDirectory;
  mailer: Mailer;
  oidc: OidcVerifier;
  passkeys: PasskeyVerifier;
  /** The deployment's relying party, for platforms that configured none of their own. */
  defaultRelyingParty: RelyingParty;
  walletKeys: WalletKeyring;
  /** True when walletKeys uses the built-in development key: production wallets are then refused. */
  walletKeysInsecure?: boolean;
}

export const toAuthMethod = (c: Credential): AuthMethod => ({
  id: c.id,
  accountId: c.accountId,
  type: c.type,
  nickname: c.nickname,
  createdAt: c.createdAt,
  updatedAt: c.updatedAt,
});

export const unauthorized = (reason: string, detail?: string) => errors.unauthorized(detail ? `${reason}: ${detail}` : reason, { reason });

/**
 * An OIDC token that failed a check: 401 UNAUTHORIZED, `details.reason` "Invalid OIDC token" and
 * `details.check` naming the check (ports.ts OidcCheck). An issuer whose keys cannot be had: 503
 * OIDC_ISSUER_UNAVAILABLE, nothing changed. Anything else is rethrown.
 */
export function oidcFailure(err: unknown): never {
  if (err instanceof OidcRejected) throw errors.unauthorized(`${REASONS.oidc}: ${err.message}`, { reason: REASONS.oidc, check: err.check });
  if (err instanceof OidcIssuerUnavailable) {
    throw new AppError("UNAVAILABLE", "OIDC_ISSUER_UNAVAILABLE", `${err.message}; nothing was changed, retry later`, { issuer: err.issuer });
  }
  throw err;
}

export const alreadyExists = (type: string) =>
  errors.badRequest(`${type}_CREDENTIAL_ALREADY_EXISTS`, `The account already has a ${type} credential (at most one per account)`);

/** A unique-index violation on the one-per-type index (a concurrent create won). */
export function isOnePerTypeViolation(err: unknown): boolean {
  const e = err as { code?: string; message?: string; constraint?: string };
  return e?.code === "23505" || /wallet_credentials_one_per_type_idx/.test(String(e?.message ?? ""));
}

/**
 * What the wallet use cases share (credentials.ts, sessions.ts, export.ts, signed-operations.ts):
 * platform facts from the store, credential lookups, OTP issue and delivery, session keys.
 */
export function walletContext(deps: WalletAuthDeps) {
  const { clock, mailer } = deps;
  const time = platformTime({
    clock,
    environment: (platformId) => deps.transact((store) => store.environmentOf(platformId)),
    sandboxNow: deps.sandboxNow ?? (async () => clock.now()),
  });

  /**
   * The time the platform's wallet records are stamped and expire by: its sandbox clock for a
   * sandbox platform (so POST /sandbox/clock/advance moves every expiry it sees), the service clock
   * for production. Asks the sandbox service: call it before a transaction opens, never inside.
   */
  const platformNow = (platformId: string): Promise<Date> => time.now(platformId);

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
  async function accountType(store: WalletStore, platformId: string, accountId: string, now: Date): Promise<string> {
    const [session] = await store.sessions.listActive(platformId, accountId, now);
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
   * EMAIL_OTP needs a way to reach the user: without a mail server a production platform gets 400
   * EMAIL_DELIVERY_NOT_CONFIGURED naming what is missing (checked before any code is drawn or
   * anything is stored). Sandbox platforms always may: the development mailer shows their codes in
   * the log, marked as such.
   */
  function requireEmailDelivery(environment: "SANDBOX" | "PRODUCTION") {
    if (mailer.deliversTo(environment)) return;
    throw new AppError(
      "INVALID",
      "EMAIL_DELIVERY_NOT_CONFIGURED",
      "This deployment has no mail server (CORRIDOR_SMTP_URL), so EMAIL_OTP codes cannot reach the users of production platforms; use PASSKEY or OAUTH credentials, or ask the operator to configure SMTP",
      { credentialType: "EMAIL_OTP" },
    );
  }

  return { platformNow, environment, relyingParty, requireCredential, accountType, newOtp, sealedSessionKey, insertSession, sendOtp, requireEmailDelivery };
}

export type WalletContext = ReturnType<typeof walletContext>;
