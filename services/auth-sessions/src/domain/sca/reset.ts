import { AppError, errors, newId, type Clock } from "@corridor/kit";
import type { LivenessProvider, ResetStatus, ScaTransact, StoredFactorReset } from "./ports.js";

/**
 * A liveness-gated reset of a lost SCA factor (Grid's POST /sca/factors/reset; docs/sca.md,
 * "Factor reset"):
 *
 *   INITIATED ──selfie submitted──▶ PENDING_REVIEW ──approved──▶ LIVENESS_PASSED ──complete──▶ COMPLETED
 *   INITIATED ──sandbox pass──▶ LIVENESS_PASSED            INITIATED | PENDING_REVIEW ──failed──▶ REJECTED
 *   INITIATED | PENDING_REVIEW | LIVENESS_PASSED ──the window closes──▶ EXPIRED (derived on read)
 *
 * COMPLETED, REJECTED and EXPIRED are final: a reset is used once.
 */
export const RESET_LIMITS = {
  /** Starts per customer within `windowMs` (Grid: "rate-limited to 5 per 24 hours per customer"). */
  starts: 5,
  windowMs: 24 * 60 * 60_000,
  /** How long a reset (and its liveness check) stays open, on the platform's clock. */
  resetMs: 24 * 60 * 60_000,
} as const;

export type ResetEvent = "LIVENESS_SUBMITTED" | "LIVENESS_PASSED" | "LIVENESS_FAILED" | "COMPLETE";

const FINAL: readonly ResetStatus[] = ["COMPLETED", "REJECTED", "EXPIRED"];

/** The state machine above (without expiry: see statusAt). Throws the public refusal of an event the status does not take. */
export function nextResetStatus(current: ResetStatus, event: ResetEvent): ResetStatus {
  if (event === "COMPLETE") {
    if (current === "LIVENESS_PASSED") return "COMPLETED";
    if (FINAL.includes(current)) throw errors.badRequest("SCA_RESET_CLOSED", `This reset is ${current} and cannot be completed; start a new reset`, { status: current });
    throw errors.badRequest("SCA_RESET_NOT_READY", `The reset's liveness check has not passed yet (status ${current}); poll GET /sca/factors/reset/{resetId} until LIVENESS_PASSED`, { status: current });
  }
  const waiting = current === "INITIATED" || current === "PENDING_REVIEW";
  if (event === "LIVENESS_SUBMITTED" && current === "INITIATED") return "PENDING_REVIEW";
  if (event === "LIVENESS_PASSED" && waiting) return "LIVENESS_PASSED";
  if (event === "LIVENESS_FAILED" && waiting) return "REJECTED";
  throw errors.conflict("INVALID_STATE_TRANSITION", `A reset in ${current} does not take ${event}`, { status: current, event });
}

/** The status a reset answers at `now`: an open reset whose window closed is EXPIRED. */
export function statusAt(r: Pick<StoredFactorReset, "status" | "expiresAt">, now: Date): ResetStatus {
  if (FINAL.includes(r.status)) return r.status;
  return now.getTime() >= r.expiresAt.getTime() ? "EXPIRED" : r.status;
}

/** Seconds until another start is allowed, given the service-clock times of the customer's recent starts (0: allowed now). */
export function resetStartWaitSeconds(startedAts: readonly Date[], now: Date): number {
  const since = now.getTime() - RESET_LIMITS.windowMs;
  const inWindow = startedAts.map((d) => d.getTime()).filter((t) => t > since).sort((a, b) => a - b);
  if (inWindow.length < RESET_LIMITS.starts) return 0;
  // The start that lets one more in is the one that leaves the window first after enough have.
  const freeing = inWindow[inWindow.length - RESET_LIMITS.starts]!;
  return Math.max(1, Math.ceil((freeing + RESET_LIMITS.windowMs - now.getTime()) / 1000));
}

const MOBILE = { countryCode: /^\+[1-9]\d{0,3}$/, number: /^\d{4,14}$/ };

export interface FactorResetDeps {
  transact: ScaTransact;
  /** Service clock: the start limit (abuse protection a sandbox clock advance does not lift). */
  clock: Clock;
  /** The platform's clock (sandbox: its sandbox clock): the reset window. */
  now: (platformId: string) => Promise<Date>;
  environment: (platformId: string) => Promise<"SANDBOX" | "PRODUCTION">;
  /** 404 / 409 SCA_NOT_REQUIRED / 423 ACCOUNT_LOCKED (sca.ts). */
  activeCustomer: (platformId: string, customerId: string) => Promise<unknown>;
  regulatedCustomer: (platformId: string, customerId: string) => Promise<unknown>;
  liveness: LivenessProvider;
  unsupportedFactor: (factor: string, field: string) => Error;
}

export function createFactorResets(deps: FactorResetDeps) {
  const { transact, clock } = deps;
  const notFound = (id: string) => new AppError("NOT_FOUND", "SCA_RESET_NOT_FOUND", `Reset ${id} not found for this customer`, { id });

  return {
    async start(platformId: string, customerId: string, factor: string) {
      await deps.activeCustomer(platformId, customerId);
      if (factor !== "SMS_OTP" && factor !== "TOTP") throw deps.unsupportedFactor(factor, "factor");
      const environment = await deps.environment(platformId);
      const now = await deps.now(platformId);
      return transact(async (s) => {
        if (factor === "TOTP" && !(await s.totp.get(platformId, customerId))?.confirmedAt) {
          throw errors.conflict("SCA_FACTOR_NOT_ENROLLED", "The customer has no confirmed TOTP factor to reset", { factor });
        }
        // The customer's login-security row serializes concurrent starts, so the limit holds under races.
        await s.loginSecurity.get(platformId, customerId, { forUpdate: true });
        const real = clock.now();
        const wait = resetStartWaitSeconds(await s.resets.startedSince(platformId, customerId, new Date(real.getTime() - RESET_LIMITS.windowMs)), real);
        if (wait > 0) {
          throw new AppError("RATE_LIMITED", "RATE_LIMITED", `At most ${RESET_LIMITS.starts} factor resets per 24 hours per customer; retry in ${wait} s`, { retryAfterSeconds: wait });
        }
        const reset: StoredFactorReset = {
          id: newId("ScaFactorReset"),
          platformId,
          customerId,
          factor,
          status: "INITIATED",
          createdAt: now,
          expiresAt: new Date(now.getTime() + RESET_LIMITS.resetMs),
          startedAt: real,
          updatedAt: now,
        };
        await s.resets.insert(reset);
        const handles = await deps.liveness.start(s, { platformId, customerId, resetId: reset.id, environment, expiresAt: reset.expiresAt }, now);
        return { resetId: reset.id, expiresAt: reset.expiresAt, livenessAccessToken: handles.accessToken, verificationPath: handles.verificationPath };
      });
    },

    async get(platformId: string, customerId: string, resetId: string) {
      await deps.regulatedCustomer(platformId, customerId);
      const now = await deps.now(platformId);
      const r = await transact((s) => s.resets.get(platformId, customerId, resetId));
      if (!r) throw notFound(resetId);
      return { status: statusAt(r, now), factor: r.factor, expiresAt: r.expiresAt };
    },

    /** Clears the lost factor of a LIVENESS_PASSED reset: TOTP is removed (the customer enrols again), SMS_OTP takes the new mobile. */
    async complete(input: { platformId: string; customerId: string; resetId: string; mobile?: { countryCode: string; number: string } }): Promise<void> {
      const { platformId, customerId, resetId } = input;
      await deps.activeCustomer(platformId, customerId);
      const now = await deps.now(platformId);
      await transact(async (s) => {
        const r = await s.resets.get(platformId, customerId, resetId, { forUpdate: true });
        if (!r) throw notFound(resetId);
        const next = nextResetStatus(statusAt(r, now), "COMPLETE");
        if (r.factor === "SMS_OTP") {
          const m = input.mobile;
          const bad = [
            !m?.countryCode || !MOBILE.countryCode.test(m.countryCode) ? { field: "body.mobile.countryCode", reason: "is required for an SMS_OTP reset: the dialling code with its leading + (e.g. +33)" } : undefined,
            !m?.number || !MOBILE.number.test(m.number) ? { field: "body.mobile.number", reason: "is required for an SMS_OTP reset: the national number, 4 to 14 digits" } : undefined,
          ].filter((e): e is { field: string; reason: string } => !!e);
          if (bad.length) throw errors.invalidInput(bad);
          await s.mobile.set(platformId, customerId, m!.countryCode, m!.number, now);
        } else {
          await s.totp.remove(platformId, customerId);
        }
        await s.resets.setStatus(r.id, next, now);
      });
    },
  };
}

export type FactorResets = ReturnType<typeof createFactorResets>;
