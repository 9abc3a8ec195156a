import { AppError, errors, newId, platformTime, type Clock } from "@corridor/kit";
import { hashOtp, newOtpCode, otpMatches } from "../wallet/otp.js";
import type { WalletKeyring } from "../wallet/at-rest.js";
import type { LoginSecurity, ScaCodeSender, ScaCustomerDirectory, ScaSubjectType, ScaTransact, StoredScaChallenge } from "./ports.js";
import { createLivenessReviewQueue } from "./liveness.js";
import { createFactorResets } from "./reset.js";
import { base32Decode, base32Encode, hashRecoveryCode, matchingStep, newRecoveryCodes, newTotpSecret, stepOf } from "./totp.js";

/** Grid's sandbox code: on a sandbox platform it satisfies any challenge. */
export const SCA_SANDBOX_CODE = "123456";
export const SCA_LIMITS = {
  /** A challenge can be authorized for this long (on the platform's clock). */
  challengeMs: 5 * 60_000,
  /** Wrong codes a challenge takes before it is dead (whatever the resends). */
  attempts: 5,
  /** One delivery per challenge per this long (service clock). */
  resendMs: 30_000,
} as const;

/** SCA logins (POST /sca/login/*, /sca/record-event): failed logins lock the customer out. */
export const SCA_LOGIN_LIMITS = {
  /** Every this many failed logins lock the customer's SCA for `lockMs`. */
  lockAfter: 5,
  /** How long a lock lasts (on the platform's clock). */
  lockMs: 15 * 60_000,
  /** This many failed logins suspend the customer until RESET_PASSWORD_COMPLETED is recorded. */
  suspendAfter: 10,
} as const;

/** The associated data a customer's TOTP secret is sealed with (binds the ciphertext to its row). */
export const totpAad = (platformId: string, customerId: string) => `sca-totp:${platformId}:${customerId}`;

/** Grid's security events Corridor records (SecurityEventType). */
export const SECURITY_EVENTS = ["FAILED_LOGIN_ATTEMPT", "RESET_PASSWORD_COMPLETED"] as const;
export type SecurityEvent = (typeof SECURITY_EVENTS)[number];

/**
 * Customers whose payments fall under PSD2's strong customer authentication: the EEA (EU + IS,
 * LI, NO). Grid: "customers in a region where SCA is required (e.g. EU)".
 */
export const SCA_REGIONS: ReadonlySet<string> = new Set([
  "AT", "BE", "BG", "HR", "CY", "CZ", "DK", "EE", "FI", "FR", "DE", "GR", "HU", "IE", "IT", "LV", "LT", "LU",
  "MT", "NL", "PL", "PT", "RO", "SK", "SI", "ES", "SE", "IS", "LI", "NO",
]);

export interface ScaChallengeView {
  id: string;
  expiresAt: Date;
  factor: "SMS_OTP";
  availableFactors: string[];
  purpose: string;
  authorizedAt: Date | null;
}

export interface ScaDeps {
  transact: ScaTransact;
  /** Service clock: the resend limit. */
  clock: Clock;
  /** A sandbox platform's clock (expiries follow POST /sandbox/clock/advance); default: the service clock. */
  sandboxNow?: (platformId: string) => Promise<Date>;
  customers: ScaCustomerDirectory;
  /** Undefined when the deployment has no mail server: sandbox platforms then use the sandbox code, production ones are refused. */
  sender?: ScaCodeSender;
  /** Seals TOTP shared secrets at rest (the wallet encryption key). */
  keyring: Pick<WalletKeyring, "seal" | "open">;
}

const view = (c: StoredScaChallenge): ScaChallengeView => ({
  id: c.id,
  expiresAt: c.expiresAt,
  factor: c.factor,
  availableFactors: ["SMS_OTP"],
  purpose: c.purpose,
  authorizedAt: c.authorizedAt,
});

const notPending = (subjectType: string, subjectId: string) =>
  errors.conflict("SCA_NOT_PENDING", `${subjectId} has no strong-customer-authentication challenge to satisfy`, { subjectType, id: subjectId });

/**
 * Strong customer authentication (docs/sca.md). A customer is SCA-regulated when their country is
 * in SCA_REGIONS; an operation of theirs that moves money to a destination they have not trusted
 * waits on a one-time-code challenge. Codes: six CSPRNG digits, stored hashed, delivered by mail
 * (never logged), at most SCA_LIMITS.attempts wrong tries per challenge under concurrency (the
 * challenge row is locked while a code is checked).
 */
export function createSca(deps: ScaDeps) {
  const { transact, clock } = deps;
  const time = platformTime({
    clock,
    environment: (platformId) => transact((s) => s.environmentOf(platformId)),
    sandboxNow: deps.sandboxNow ?? (async () => clock.now()),
  });

  async function environment(platformId: string) {
    const env = await transact((s) => s.environmentOf(platformId));
    if (!env) throw errors.notFound("Platform", platformId || undefined);
    return env;
  }

  /** 400 SCA_DELIVERY_NOT_CONFIGURED before anything is drawn when a production customer cannot get the code. */
  function requireDelivery(env: "SANDBOX" | "PRODUCTION", email: string) {
    if (env === "SANDBOX") return;
    if (!deps.sender) {
      throw new AppError("INVALID", "SCA_DELIVERY_NOT_CONFIGURED", "This deployment has no mail server (CORRIDOR_SMTP_URL), so SCA codes cannot reach production customers", {});
    }
    if (!email) throw new AppError("INVALID", "SCA_DELIVERY_NOT_CONFIGURED", "The customer has no email address to send the SCA code to; add one (PATCH /customers/{id})", {});
  }

  /** Sends the code when a mail server is there (a sandbox platform without one: the sandbox code is the way). */
  async function deliver(c: { id: string; platformId: string }, email: string, code: string, env: "SANDBOX" | "PRODUCTION") {
    if (!deps.sender || !email) return;
    await deps.sender.sendOtp(email, code, { platformId: c.platformId, credentialId: c.id, environment: env });
  }

  /** Whether the customer's payments need SCA: 409 SCA_NOT_REQUIRED otherwise (Grid: "these endpoints return 409"). */
  async function regulatedCustomer(platformId: string, customerId: string) {
    const customer = await deps.customers.get(platformId, customerId);
    if (!SCA_REGIONS.has(customer.country)) {
      throw errors.conflict("SCA_NOT_REQUIRED", "Strong customer authentication does not apply to this customer (outside SCA-regulated regions)", { customerId });
    }
    return customer;
  }

  async function issue(input: { platformId: string; customerId: string; email: string; subjectType: ScaSubjectType; subjectId: string; purpose: string }, env: "SANDBOX" | "PRODUCTION") {
    requireDelivery(env, input.email);
    const now = await time.now(input.platformId);
    const id = newId("ScaChallenge");
    const code = newOtpCode();
    const c: StoredScaChallenge = {
      id,
      platformId: input.platformId,
      customerId: input.customerId,
      subjectType: input.subjectType,
      subjectId: input.subjectId,
      factor: "SMS_OTP",
      purpose: input.purpose,
      codeSha256: hashOtp(id, code),
      attempts: 0,
      createdAt: now,
      expiresAt: new Date(now.getTime() + SCA_LIMITS.challengeMs),
      lastSentAt: clock.now(),
      authorizedAt: null,
    };
    return transact(async (s) => {
      await s.challenges.insert(c);
      // Sent before the commit: a code the mail server does not take leaves no challenge behind.
      await deliver(c, input.email, code, env);
      return view(c);
    });
  }

  /** Checks `code` against the subject's live challenge and marks it authorized. */
  async function authorize(platformId: string, subjectType: ScaSubjectType, subjectId: string, code: string): Promise<ScaChallengeView> {
    if (!/^\d{6}$/.test(code)) throw errors.invalidInput([{ field: "code", reason: "must be the six-digit code" }]);
    const env = await environment(platformId);
    const now = await time.now(platformId);
    const outcome = await transact(async (s) => {
      const c = await s.challenges.latest(platformId, subjectType, subjectId, { forUpdate: true });
      if (!c) throw notPending(subjectType, subjectId);
      if (c.authorizedAt) return { challenge: c };
      if (now.getTime() >= c.expiresAt.getTime()) return { failed: "SCA_CHALLENGE_EXPIRED", message: "The challenge has expired" } as const;
      if (c.attempts >= SCA_LIMITS.attempts) return { failed: "SCA_ATTEMPTS_EXCEEDED", message: "Too many wrong codes for this challenge" } as const;
      const magic = env === "SANDBOX" && code === SCA_SANDBOX_CODE;
      if (!magic && !otpMatches(c.id, code, c.codeSha256)) {
        // Counted in a transaction that commits (the row is locked: concurrent tries count one by one).
        await s.challenges.setAttempts(c.id, c.attempts + 1);
        const left = SCA_LIMITS.attempts - c.attempts - 1;
        return { failed: "SCA_CODE_INVALID", message: `The code does not match (${left} attempt${left === 1 ? "" : "s"} left)`, left } as const;
      }
      await s.challenges.markAuthorized(c.id, now);
      return { challenge: { ...c, authorizedAt: now } };
    });
    if ("failed" in outcome && outcome.failed) {
      throw errors.badRequest(outcome.failed, outcome.message, outcome.left !== undefined ? { attemptsLeft: outcome.left } : {});
    }
    return view(outcome.challenge!);
  }

  async function resend(platformId: string, subjectType: ScaSubjectType, subjectId: string): Promise<void> {
    const env = await environment(platformId);
    const now = await time.now(platformId);
    const c0 = await transact((s) => s.challenges.latest(platformId, subjectType, subjectId));
    if (!c0 || c0.authorizedAt) throw notPending(subjectType, subjectId);
    const customer = await deps.customers.get(platformId, c0.customerId);
    requireDelivery(env, customer.email);
    await transact(async (s) => {
      const c = await s.challenges.latest(platformId, subjectType, subjectId, { forUpdate: true });
      if (!c || c.authorizedAt || c.id !== c0.id) throw notPending(subjectType, subjectId);
      // A dead challenge waits for nothing any more: 409 SCA_NOT_PENDING, saying why.
      if (now.getTime() >= c.expiresAt.getTime()) throw errors.conflict("SCA_NOT_PENDING", "The challenge has expired; its code cannot be sent again", { subjectType, id: subjectId, reason: "EXPIRED" });
      if (c.attempts >= SCA_LIMITS.attempts) throw errors.conflict("SCA_NOT_PENDING", "Too many wrong codes for this challenge; its code cannot be sent again", { subjectType, id: subjectId, reason: "ATTEMPTS_EXCEEDED" });
      // Abuse protection (the customer's inbox): on the service clock, so a sandbox clock advance does not lift it.
      const real = clock.now();
      const waitMs = c.lastSentAt.getTime() + SCA_LIMITS.resendMs - real.getTime();
      if (waitMs > 0) {
        const retryAfterSeconds = Math.ceil(waitMs / 1000);
        throw new AppError("RATE_LIMITED", "RATE_LIMITED", `One code per challenge every 30 seconds; retry in ${retryAfterSeconds} s`, { retryAfterSeconds });
      }
      // A fresh code replaces the old one; the expiry and the attempts stay (Grid: the challenge is reused).
      const code = newOtpCode();
      await s.challenges.setCode(c.id, hashOtp(c.id, code), real);
      await deliver(c, customer.email, code, env);
    });
  }

  const trustSubject = (trust: boolean): ScaSubjectType => (trust ? "TRUST_BENEFICIARY" : "UNTRUST_BENEFICIARY");

  /** Trusting (untrusting) a beneficiary: a challenge of its own (409 SCA_NOT_REQUIRED outside SCA-regulated regions). */
  async function startTrust(input: { platformId: string; customerId: string; externalAccountId: string; trust: boolean }): Promise<ScaChallengeView> {
    const customer = await regulatedCustomer(input.platformId, input.customerId);
    const subjectType = trustSubject(input.trust);
    const latest = await transact((s) => s.challenges.latest(input.platformId, subjectType, input.externalAccountId));
    // A new start sends a new code: limited like a resend (the customer's inbox).
    if (latest && !latest.authorizedAt) {
      const waitMs = latest.lastSentAt.getTime() + SCA_LIMITS.resendMs - clock.now().getTime();
      if (waitMs > 0) {
        const retryAfterSeconds = Math.ceil(waitMs / 1000);
        throw new AppError("RATE_LIMITED", "RATE_LIMITED", `One code per beneficiary every 30 seconds; retry in ${retryAfterSeconds} s`, { retryAfterSeconds });
      }
    }
    const env = await environment(input.platformId);
    return issue({ platformId: input.platformId, customerId: input.customerId, email: customer.email, subjectType, subjectId: input.externalAccountId, purpose: subjectType }, env);
  }

  async function confirmTrust(input: { platformId: string; externalAccountId: string; trust: boolean; code: string; challengeId: string }): Promise<boolean> {
    const subjectType = trustSubject(input.trust);
    if (input.challengeId) {
      const latest = await transact((s) => s.challenges.latest(input.platformId, subjectType, input.externalAccountId));
      if (!latest || latest.id !== input.challengeId) throw notPending(subjectType, input.externalAccountId);
    }
    const c = await authorize(input.platformId, subjectType, input.externalAccountId, input.code);
    const at = await time.now(input.platformId);
    await transact(async (s) => {
      const challenge = await s.challenges.latest(input.platformId, subjectType, input.externalAccountId);
      if (!challenge || challenge.id !== c.id) throw notPending(subjectType, input.externalAccountId);
      if (input.trust) await s.trusted.trust(input.platformId, challenge.customerId, input.externalAccountId, at);
      else await s.trusted.untrust(input.platformId, input.externalAccountId);
    });
    return input.trust;
  }


  /** 423 ACCOUNT_LOCKED while the customer is locked out or suspended (Grid's login lockout). */
  function assertUnlocked(state: LoginSecurity, now: Date) {
    if (state.suspended) {
      throw new AppError("FORBIDDEN", "ACCOUNT_LOCKED", "The customer's SCA login is suspended after too many failed attempts; record RESET_PASSWORD_COMPLETED to lift it", { suspended: true, lockedUntil: null });
    }
    if (state.lockedUntil && now.getTime() < state.lockedUntil.getTime()) {
      throw new AppError("FORBIDDEN", "ACCOUNT_LOCKED", `The customer's SCA login is locked after too many failed attempts until ${state.lockedUntil.toISOString()}`, { suspended: false, lockedUntil: state.lockedUntil.toISOString() });
    }
  }

  /** A regulated customer who is not locked out (every /sca/* call but record-event). */
  async function activeCustomer(platformId: string, customerId: string) {
    const customer = await regulatedCustomer(platformId, customerId);
    const now = await time.now(platformId);
    assertUnlocked(await transact((s) => s.loginSecurity.get(platformId, customerId)), now);
    return customer;
  }

  /** One failed login (a wrong code, or FAILED_LOGIN_ATTEMPT recorded): may lock or suspend. */
  async function countFailedLogin(platformId: string, customerId: string, now: Date): Promise<LoginSecurity> {
    return transact(async (s) => {
      const cur = await s.loginSecurity.get(platformId, customerId, { forUpdate: true });
      const failedAttempts = cur.failedAttempts + 1;
      const next: LoginSecurity = {
        failedAttempts,
        suspended: cur.suspended || failedAttempts >= SCA_LOGIN_LIMITS.suspendAfter,
        lockedUntil: failedAttempts % SCA_LOGIN_LIMITS.lockAfter === 0 ? new Date(now.getTime() + SCA_LOGIN_LIMITS.lockMs) : cur.lockedUntil,
      };
      if (next.suspended) next.lockedUntil = null;
      await s.loginSecurity.set(platformId, customerId, next);
      return next;
    });
  }

  const unsupportedFactor = (factor: string, field: string) =>
    new AppError("INVALID", "SCA_FACTOR_NOT_SUPPORTED", `${factor || "(empty)"} is not a factor Corridor issues here: SMS_OTP (a one-time code, no enrolment) and TOTP (an authenticator app) are`, { field, factor });

  /** Checks a TOTP code (or an unused recovery code) and consumes it; false when it does not match. */
  async function useTotp(platformId: string, customerId: string, code: string, opts: { confirming?: { secret: string } } = {}): Promise<{ ok: boolean; recoveryCodes?: string[] }> {
    const env = await environment(platformId);
    // TOTP follows the real time authenticator apps see, not a sandbox clock.
    const now = clock.now();
    return transact(async (s) => {
      const f = await s.totp.get(platformId, customerId, { forUpdate: true });
      if (!f || (opts.confirming ? f.confirmedAt !== null : f.confirmedAt === null)) {
        throw errors.conflict("SCA_FACTOR_NOT_ENROLLED", opts.confirming ? "There is no TOTP enrolment waiting for its first code; start one with POST /sca/factors" : "The customer has no confirmed TOTP factor; enrol one with POST /sca/factors", { factor: "TOTP" });
      }
      const secret = deps.keyring.open(f.secretSealed, totpAad(platformId, customerId), f.keyId);
      if (opts.confirming && opts.confirming.secret.toUpperCase().replace(/=+$/, "") !== base32Encode(secret)) {
        throw errors.conflict("SCA_FACTOR_NOT_ENROLLED", "The secret is not the one of the customer's pending TOTP enrolment; start again with POST /sca/factors", { factor: "TOTP" });
      }
      const sixDigits = /^\d{6}$/.test(code);
      const magic = env === "SANDBOX" && code === SCA_SANDBOX_CODE;
      const step = sixDigits ? (magic ? Math.max(stepOf(now), f.lastStep) : matchingStep(secret, code, now, f.lastStep)) : undefined;
      if (opts.confirming) {
        if (step === undefined) return { ok: false };
        const recoveryCodes = newRecoveryCodes();
        await s.totp.confirm(platformId, customerId, now, step, recoveryCodes.map((c) => hashRecoveryCode(customerId, c)));
        return { ok: true, recoveryCodes };
      }
      if (step !== undefined) {
        await s.totp.use(platformId, customerId, step, f.recoveryCodesSha256);
        return { ok: true };
      }
      const hash = hashRecoveryCode(customerId, code);
      if (!sixDigits && f.recoveryCodesSha256.includes(hash)) {
        await s.totp.use(platformId, customerId, f.lastStep, f.recoveryCodesSha256.filter((h) => h !== hash));
        return { ok: true };
      }
      return { ok: false };
    });
  }

  const codeInvalid = (state: LoginSecurity) => {
    const left = SCA_LOGIN_LIMITS.lockAfter - (state.failedAttempts % SCA_LOGIN_LIMITS.lockAfter);
    return errors.badRequest("SCA_CODE_INVALID", `The code does not match (${left} attempt${left === 1 ? "" : "s"} left before the login locks)`, { attemptsLeft: left });
  };

  /** A LOGIN challenge is limited like a trust start: one code per 30 seconds (the customer's inbox). */
  async function loginChallenge(platformId: string, customerId: string, email: string) {
    const latest = await transact((s) => s.challenges.latest(platformId, "LOGIN", customerId));
    if (latest && !latest.authorizedAt) {
      const waitMs = latest.lastSentAt.getTime() + SCA_LIMITS.resendMs - clock.now().getTime();
      if (waitMs > 0) {
        const retryAfterSeconds = Math.ceil(waitMs / 1000);
        throw new AppError("RATE_LIMITED", "RATE_LIMITED", `One login code every 30 seconds; retry in ${retryAfterSeconds} s`, { retryAfterSeconds });
      }
    }
    const env = await environment(platformId);
    return issue({ platformId, customerId, email, subjectType: "LOGIN", subjectId: customerId, purpose: "LOGIN" }, env);
  }

  const factors = {
    /** SMS_OTP (Corridor's one-time code, delivered like EMAIL_OTP codes) always; TOTP once confirmed. */
    async list(platformId: string, customerId: string): Promise<string[]> {
      await activeCustomer(platformId, customerId);
      const totp = await transact((s) => s.totp.get(platformId, customerId));
      return totp?.confirmedAt ? ["SMS_OTP", "TOTP"] : ["SMS_OTP"];
    },
    async startEnrollment(platformId: string, customerId: string, factor: string) {
      const customer = await activeCustomer(platformId, customerId);
      if (factor !== "TOTP") throw unsupportedFactor(factor, "type");
      const secret = newTotpSecret();
      const { sealed, keyId } = deps.keyring.seal(secret, totpAad(platformId, customerId));
      const now = clock.now();
      await transact(async (s) => {
        const existing = await s.totp.get(platformId, customerId, { forUpdate: true });
        if (existing?.confirmedAt) throw errors.conflict("SCA_FACTOR_ALREADY_ENROLLED", "The customer already has a TOTP factor", { factor: "TOTP" });
        await s.totp.put({ platformId, customerId, secretSealed: sealed, keyId, createdAt: now, confirmedAt: null, lastStep: 0, recoveryCodesSha256: [] });
      });
      const b32 = base32Encode(secret);
      const label = encodeURIComponent(`Corridor:${customer.email || customerId}`);
      return { secret: b32, secretBase32Encoded: b32, totpUri: `otpauth://totp/${label}?secret=${b32}&issuer=Corridor&algorithm=SHA1&digits=6&period=30` };
    },
    async confirmEnrollment(platformId: string, customerId: string, factor: string, secret: string, code: string): Promise<string[]> {
      await activeCustomer(platformId, customerId);
      if (factor !== "TOTP") throw unsupportedFactor(factor, "type");
      if (!base32Decode(secret)) throw errors.invalidInput([{ field: "secret", reason: "must be the secret the enrolment start answered" }]);
      const r = await useTotp(platformId, customerId, code, { confirming: { secret } });
      if (!r.ok) throw errors.badRequest("SCA_CODE_INVALID", "The code is not the authenticator's current one", {});
      return r.recoveryCodes!;
    },
  };

  const login = {
    async start(platformId: string, customerId: string, factor: string): Promise<{ factor: string; challenge?: ScaChallengeView }> {
      const customer = await activeCustomer(platformId, customerId);
      if (factor === "SMS_OTP") return { factor, challenge: await loginChallenge(platformId, customerId, customer.email) };
      if (factor === "TOTP") {
        const totp = await transact((s) => s.totp.get(platformId, customerId));
        if (!totp?.confirmedAt) throw errors.conflict("SCA_FACTOR_NOT_ENROLLED", "The customer has no confirmed TOTP factor; enrol one with POST /sca/factors", { factor: "TOTP" });
        return { factor };
      }
      throw unsupportedFactor(factor, "factor");
    },
    async complete(input: { platformId: string; customerId: string; factor: string; challengeId: string; code: string }): Promise<string> {
      const { platformId, customerId } = input;
      await activeCustomer(platformId, customerId);
      const now = await time.now(platformId);
      if (input.factor !== "SMS_OTP" && input.factor !== "TOTP") throw unsupportedFactor(input.factor, "factor");
      if (!input.code) throw errors.invalidInput([{ field: "code", reason: "is required: the one-time code the customer received or read from their authenticator" }]);
      if (input.factor === "SMS_OTP") {
        if (!input.challengeId) throw errors.invalidInput([{ field: "challengeId", reason: "is required for SMS_OTP: the login start's challengeId" }]);
        const latest = await transact((s) => s.challenges.latest(platformId, "LOGIN", customerId));
        if (!latest || latest.id !== input.challengeId || latest.authorizedAt) throw notPending("LOGIN", customerId);
        try {
          await authorize(platformId, "LOGIN", customerId, input.code);
        } catch (err) {
          if (err instanceof AppError && err.code === "SCA_CODE_INVALID") await countFailedLogin(platformId, customerId, now);
          throw err;
        }
      } else {
        const r = await useTotp(platformId, customerId, input.code);
        if (!r.ok) throw codeInvalid(await countFailedLogin(platformId, customerId, now));
      }
      await transact(async (s) => {
        await s.loginSecurity.get(platformId, customerId, { forUpdate: true });
        await s.loginSecurity.set(platformId, customerId, { failedAttempts: 0, lockedUntil: null, suspended: false });
      });
      return "SUCCESS";
    },
  };

  /** Records a security event (FAILED_LOGIN_ATTEMPT counts; RESET_PASSWORD_COMPLETED clears) and answers the state. */
  async function recordEvent(platformId: string, customerId: string, eventType: string): Promise<LoginSecurity & { eventType: SecurityEvent }> {
    if (!(SECURITY_EVENTS as readonly string[]).includes(eventType)) {
      throw errors.invalidInput([{ field: "eventType", reason: `must be one of ${SECURITY_EVENTS.join(", ")}` }]);
    }
    await regulatedCustomer(platformId, customerId);
    const now = await time.now(platformId);
    if (eventType === "FAILED_LOGIN_ATTEMPT") return { eventType, ...(await countFailedLogin(platformId, customerId, now)) };
    const cleared: LoginSecurity = { failedAttempts: 0, lockedUntil: null, suspended: false };
    await transact(async (s) => {
      await s.loginSecurity.get(platformId, customerId, { forUpdate: true });
      await s.loginSecurity.set(platformId, customerId, cleared);
    });
    return { eventType: "RESET_PASSWORD_COMPLETED", ...cleared };
  }

  // The liveness provider connector that ships: the operator's review queue (liveness.ts).
  const liveness = createLivenessReviewQueue({ transact, clock, now: (platformId) => time.now(platformId) });
  const resets = createFactorResets({
    transact,
    clock,
    now: (platformId) => time.now(platformId),
    environment,
    activeCustomer,
    regulatedCustomer,
    liveness: liveness.provider,
    unsupportedFactor,
  });

  return {
    factors,
    login,
    resets,
    liveness,
    recordEvent,
    startTrust,
    confirmTrust,
    /**
     * Whether an operation of the customer needs SCA, and its challenge when it does (one per
     * subject: a second call answers the same live challenge).
     */
    async beginAuthorization(input: { platformId: string; customerId: string; subjectType: ScaSubjectType; subjectId: string; externalAccountId: string }): Promise<{ required: boolean; challenge?: ScaChallengeView }> {
      if (!input.customerId) return { required: false };
      const customer = await deps.customers.get(input.platformId, input.customerId);
      if (!SCA_REGIONS.has(customer.country)) return { required: false };
      const existing = await transact(async (s) => ({
        trusted: input.externalAccountId ? await s.trusted.isTrusted(input.platformId, input.externalAccountId) : false,
        latest: await s.challenges.latest(input.platformId, input.subjectType, input.subjectId),
      }));
      if (existing.trusted) return { required: false };
      if (existing.latest) return { required: true, challenge: view(existing.latest) };
      const env = await environment(input.platformId);
      return { required: true, challenge: await issue({ ...input, email: customer.email, purpose: "TRANSFER" }, env) };
    },
    authorize,
    resend,
    regulatedCustomer,
  };
}

export type Sca = ReturnType<typeof createSca>;
