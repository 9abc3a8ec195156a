import { createHash, randomBytes } from "node:crypto";
import { AppError, errors, newId, type Clock } from "@corridor/kit";
import type { LivenessProvider, LivenessStatus, ScaStore, ScaTransact, StoredLivenessCheck } from "./ports.js";
import { nextResetStatus, type ResetEvent } from "./reset.js";

export type { LivenessHandles, LivenessProvider, LivenessStartRequest } from "./ports.js";

/** What a provider reports about a check: submitted for review, passed, or failed. */
export type LivenessOutcome = "SUBMITTED" | "PASSED" | "FAILED";

const EVENT: Record<LivenessOutcome, ResetEvent> = { SUBMITTED: "LIVENESS_SUBMITTED", PASSED: "LIVENESS_PASSED", FAILED: "LIVENESS_FAILED" };

/** Applies a provider's outcome to the reset it gates, inside the caller's transaction (the reset row locked). */
export async function applyLivenessOutcome(store: ScaStore, o: { platformId: string; customerId: string; resetId: string; outcome: LivenessOutcome }, at: Date): Promise<void> {
  const reset = await store.resets.get(o.platformId, o.customerId, o.resetId, { forUpdate: true });
  if (!reset) throw new Error(`liveness outcome for reset ${o.resetId}, which does not exist`);
  await store.resets.setStatus(reset.id, nextResetStatus(reset.status, EVENT[o.outcome]), at);
}

export const LIVENESS_PAGE_PREFIX = "/liveness";
export const SELFIE_MAX_BYTES = 10 * 1024 * 1024;
const SELFIE_TYPES: Record<string, (b: Uint8Array) => boolean> = {
  "image/jpeg": (b) => b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff,
  "image/png": (b) => b.length >= 8 && Buffer.from(b.subarray(0, 8)).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
};
const REASON_MAX = 1000;
export const LIVENESS_STATUSES: readonly LivenessStatus[] = ["AWAITING_SUBMISSION", "SUBMITTED", "APPROVED", "REJECTED"];

const sha256 = (b: Uint8Array | string) => createHash("sha256").update(b).digest("hex");

/** The review queue's state machine: a selfie once, then one decision. */
export function nextLivenessStatus(current: LivenessStatus, action: "SUBMIT" | "APPROVE" | "REJECT"): LivenessStatus {
  if (action === "SUBMIT") {
    if (current !== "AWAITING_SUBMISSION") throw errors.conflict("LIVENESS_CHECK_SUBMITTED", "This liveness check was already submitted", { status: current });
    return "SUBMITTED";
  }
  if (current !== "SUBMITTED") {
    throw errors.conflict(
      "INVALID_STATE_TRANSITION",
      current === "AWAITING_SUBMISSION" ? "This liveness check has no selfie yet; it can be decided once the end user submitted one" : `This liveness check is already ${current}; a decision is final`,
      { status: current },
    );
  }
  return action === "APPROVE" ? "APPROVED" : "REJECTED";
}

/**
 * The operator's liveness review queue: the liveness provider connector that ships. A check's
 * hosted page (gateway /liveness/<token>) takes the end user's selfie on a production platform;
 * the operator compares it with the customer's KYC documents and approves or rejects it
 * (`npm run admin -- liveness ...`). A sandbox platform's page has pass / fail controls instead
 * and no person decides. `now(platformId)` is the platform's clock (sandbox: its sandbox clock).
 */
export function createLivenessReviewQueue({ transact, clock, now }: { transact: ScaTransact; clock: Clock; now: (platformId: string) => Promise<Date> }) {
  const notFound = () => new AppError("NOT_FOUND", "LIVENESS_CHECK_NOT_FOUND", "This liveness check does not exist", {});

  /**
   * The token's check and the platform's time, refused when the reset window closed. Read before
   * the locking transaction: the platform's clock may be an RPC (a sandbox clock), and nothing is
   * awaited from another service inside a transaction (PGlite is one session).
   */
  async function openCheck(token: string): Promise<{ check: StoredLivenessCheck; at: Date }> {
    if (!token || token.length > 128) throw notFound();
    const check = await transact((s) => s.liveness.byToken(sha256(token)));
    if (!check) throw notFound();
    const at = await now(check.platformId);
    if (at.getTime() >= check.expiresAt.getTime()) throw new AppError("GONE", "LIVENESS_CHECK_EXPIRED", "This liveness check has expired; start a new reset", {});
    return { check, at };
  }

  /** The check again, locked, inside the caller's transaction. */
  async function locked(store: ScaStore, id: string): Promise<StoredLivenessCheck> {
    const c = await store.liveness.get(id, { forUpdate: true });
    if (!c) throw notFound();
    return c;
  }

  /** Moves the check, then reports the outcome to its reset (one transaction); `at` is the platform's time. */
  async function move(store: ScaStore, c: StoredLivenessCheck, status: LivenessStatus, outcome: LivenessOutcome, reason: string, at: Date) {
    if (status === "APPROVED" || status === "REJECTED") await store.liveness.decide(c.id, status, reason, clock.now());
    await applyLivenessOutcome(store, { platformId: c.platformId, customerId: c.customerId, resetId: c.resetId, outcome }, at);
  }

  const provider: LivenessProvider = {
    async start(store, req, at) {
      const token = randomBytes(32).toString("base64url");
      const id = newId("LivenessCheck");
      await store.liveness.insert({
        id,
        platformId: req.platformId,
        customerId: req.customerId,
        resetId: req.resetId,
        environment: req.environment,
        status: "AWAITING_SUBMISSION",
        tokenSha256: sha256(token),
        reason: "",
        selfieContentType: "",
        selfieSha256: "",
        selfieSizeBytes: 0,
        createdAt: at,
        submittedAt: null,
        decidedAt: null,
        expiresAt: req.expiresAt,
      });
      return { checkId: id, accessToken: token, verificationPath: `${LIVENESS_PAGE_PREFIX}/${token}` };
    },
  };

  const page = {
    async get(token: string): Promise<StoredLivenessCheck> {
      return (await openCheck(token)).check;
    },
    /** A production check's selfie: stored for the operator, the reset becomes PENDING_REVIEW. */
    async submitSelfie(token: string, contentType: string, content: Uint8Array): Promise<LivenessStatus> {
      const looksRight = SELFIE_TYPES[contentType];
      if (!looksRight) throw errors.invalidInput([{ field: "file", reason: "must be a JPEG or PNG photo (image/jpeg, image/png)" }]);
      if (content.length === 0) throw errors.invalidInput([{ field: "file", reason: "is empty" }]);
      if (content.length > SELFIE_MAX_BYTES) throw errors.invalidInput([{ field: "file", reason: `must be at most ${SELFIE_MAX_BYTES} bytes` }]);
      if (!looksRight(content)) throw errors.invalidInput([{ field: "file", reason: `does not hold ${contentType === "image/png" ? "a PNG" : "a JPEG"} image` }]);
      const { check, at } = await openCheck(token);
      return transact(async (s) => {
        const c = await locked(s, check.id);
        if (c.environment === "SANDBOX") throw errors.badRequest("LIVENESS_SANDBOX_CONTROLS", "A sandbox platform's liveness check is decided with the page's pass / fail controls, not a selfie", {});
        const status = nextLivenessStatus(c.status, "SUBMIT");
        await s.liveness.submit(c.id, { contentType, sha256: sha256(content), content }, clock.now());
        await move(s, c, status, "SUBMITTED", "", at);
        return status;
      });
    },
    /** A sandbox check's pass / fail controls (no real check). */
    async decideSandbox(token: string, outcome: string): Promise<LivenessStatus> {
      if (outcome !== "PASS" && outcome !== "FAIL") throw errors.invalidInput([{ field: "outcome", reason: "must be PASS or FAIL" }]);
      const { check, at } = await openCheck(token);
      return transact(async (s) => {
        const c = await locked(s, check.id);
        if (c.environment !== "SANDBOX") throw new AppError("FORBIDDEN", "LIVENESS_SANDBOX_ONLY", "Only a sandbox platform's liveness check can be passed or failed from its page", {});
        if (c.status !== "AWAITING_SUBMISSION") throw errors.conflict("INVALID_STATE_TRANSITION", `This liveness check is already ${c.status}`, { status: c.status });
        const status: LivenessStatus = outcome === "PASS" ? "APPROVED" : "REJECTED";
        await move(s, c, status, outcome === "PASS" ? "PASSED" : "FAILED", outcome === "PASS" ? "" : "sandbox: failed on the page", at);
        return status;
      });
    },
  };

  const admin = {
    list(filter: { status?: string; platformId?: string; limit?: number }): Promise<StoredLivenessCheck[]> {
      if (filter.status && !(LIVENESS_STATUSES as readonly string[]).includes(filter.status)) {
        throw errors.invalidInput([{ field: "status", reason: `must be one of ${LIVENESS_STATUSES.join(", ")}` }]);
      }
      const limit = filter.limit || 100;
      if (!Number.isInteger(limit) || limit < 1 || limit > 500) throw errors.invalidInput([{ field: "limit", reason: "must be 1 to 500" }]);
      return transact((s) => s.liveness.list({ status: (filter.status || undefined) as LivenessStatus | undefined, platformId: filter.platformId || undefined, limit }));
    },
    get(id: string): Promise<StoredLivenessCheck> {
      return transact(async (s) => (await s.liveness.get(id)) ?? Promise.reject(notFound()));
    },
    selfie(id: string): Promise<{ check: StoredLivenessCheck; content: Uint8Array }> {
      return transact(async (s) => {
        const check = await s.liveness.get(id);
        const content = check && (await s.liveness.selfie(id));
        if (!check || !content) throw new AppError("NOT_FOUND", "LIVENESS_SELFIE_NOT_FOUND", `Liveness check ${id} has no selfie`, { id });
        if (sha256(content) !== check.selfieSha256) throw new Error(`liveness check ${id}: the stored selfie does not match its SHA-256`);
        return { check, content };
      });
    },
    /** The operator's decision: APPROVE or REJECT (with a reason). */
    async decide(id: string, decision: string, reason: string): Promise<StoredLivenessCheck> {
      const why = reason.trim();
      if (decision !== "APPROVE" && decision !== "REJECT") throw errors.invalidInput([{ field: "decision", reason: "must be APPROVE or REJECT" }]);
      if (decision === "REJECT" && !why) throw errors.invalidInput([{ field: "reason", reason: "is required to reject" }]);
      if (why.length > REASON_MAX) throw errors.invalidInput([{ field: "reason", reason: `must be at most ${REASON_MAX} characters` }]);
      const found = await transact((s) => s.liveness.get(id));
      if (!found) throw notFound();
      const at = await now(found.platformId);
      return transact(async (s) => {
        const c = await locked(s, id);
        const status = nextLivenessStatus(c.status, decision);
        await move(s, c, status, status === "APPROVED" ? "PASSED" : "FAILED", decision === "REJECT" ? why : "", at);
        return (await s.liveness.get(id))!;
      });
    },
  };

  return { provider, page, admin };
}

export type LivenessReviewQueue = ReturnType<typeof createLivenessReviewQueue>;
