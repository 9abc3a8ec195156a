import { randomUUID } from "node:crypto";
import { Writable } from "node:stream";
import { createClient, createRouterTransport } from "@connectrpc/connect";
import { AppError, ManualClock, appErrorInterceptor, createLogger } from "@corridor/kit";
import { openServiceTestDatabase } from "@corridor/kit/testing";
import { Environment } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import { PlatformAdminService } from "@corridor/proto/corridor/auth_sessions/v1/platform_admin_service_pb.js";
import { LivenessAdminService, LivenessService } from "@corridor/proto/corridor/auth_sessions/v1/liveness_service_pb.js";
import { ScaService } from "@corridor/proto/corridor/auth_sessions/v1/sca_service_pb.js";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nextLivenessStatus } from "../src/domain/sca/liveness.js";
import type { ResetStatus, ScaCustomer } from "../src/domain/sca/ports.js";
import { RESET_LIMITS, nextResetStatus, resetStartWaitSeconds, statusAt, type ResetEvent } from "../src/domain/sca/reset.js";
import { buildAuthSessions, service } from "../src/server.js";
import { expectPublicError, scaCustomerDirectory } from "./harness.js";

// The SCA factor reset (docs/sca.md, "Factor reset"): its state machine and start limit as pure
// functions, then the limit under concurrent starts over a real database with a manual clock.

const STATUSES: ResetStatus[] = ["INITIATED", "PENDING_REVIEW", "LIVENESS_PASSED", "COMPLETED", "REJECTED", "EXPIRED"];
const EVENTS: ResetEvent[] = ["LIVENESS_SUBMITTED", "LIVENESS_PASSED", "LIVENESS_FAILED", "COMPLETE"];

const outcome = (status: ResetStatus, event: ResetEvent): string => {
  try {
    return nextResetStatus(status, event);
  } catch (err) {
    return `!${(err as AppError).code}`;
  }
};

describe("the reset state machine", () => {
  it("takes exactly the documented transitions; anything else is refused with its public code", () => {
    const table = Object.fromEntries(STATUSES.map((s) => [s, Object.fromEntries(EVENTS.map((e) => [e, outcome(s, e)]))]));
    expect(table).toEqual({
      INITIATED: { LIVENESS_SUBMITTED: "PENDING_REVIEW", LIVENESS_PASSED: "LIVENESS_PASSED", LIVENESS_FAILED: "REJECTED", COMPLETE: "!SCA_RESET_NOT_READY" },
      PENDING_REVIEW: { LIVENESS_SUBMITTED: "!INVALID_STATE_TRANSITION", LIVENESS_PASSED: "LIVENESS_PASSED", LIVENESS_FAILED: "REJECTED", COMPLETE: "!SCA_RESET_NOT_READY" },
      LIVENESS_PASSED: { LIVENESS_SUBMITTED: "!INVALID_STATE_TRANSITION", LIVENESS_PASSED: "!INVALID_STATE_TRANSITION", LIVENESS_FAILED: "!INVALID_STATE_TRANSITION", COMPLETE: "COMPLETED" },
      COMPLETED: { LIVENESS_SUBMITTED: "!INVALID_STATE_TRANSITION", LIVENESS_PASSED: "!INVALID_STATE_TRANSITION", LIVENESS_FAILED: "!INVALID_STATE_TRANSITION", COMPLETE: "!SCA_RESET_CLOSED" },
      REJECTED: { LIVENESS_SUBMITTED: "!INVALID_STATE_TRANSITION", LIVENESS_PASSED: "!INVALID_STATE_TRANSITION", LIVENESS_FAILED: "!INVALID_STATE_TRANSITION", COMPLETE: "!SCA_RESET_CLOSED" },
      EXPIRED: { LIVENESS_SUBMITTED: "!INVALID_STATE_TRANSITION", LIVENESS_PASSED: "!INVALID_STATE_TRANSITION", LIVENESS_FAILED: "!INVALID_STATE_TRANSITION", COMPLETE: "!SCA_RESET_CLOSED" },
    });
  });

  it("no sequence of events reaches COMPLETED without LIVENESS_PASSED, or leaves a final status", () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...EVENTS), { maxLength: 12 }), (events) => {
        let s: ResetStatus = "INITIATED";
        const seen: ResetStatus[] = [s];
        for (const e of events) {
          const next = outcome(s, e);
          if (next.startsWith("!")) continue;
          if (["COMPLETED", "REJECTED"].includes(s)) return false;
          s = next as ResetStatus;
          seen.push(s);
        }
        return !seen.includes("COMPLETED") || seen.indexOf("LIVENESS_PASSED") < seen.indexOf("COMPLETED");
      }),
    );
  });

  it("an open reset whose window closed answers EXPIRED; a final one keeps its status", () => {
    const expiresAt = new Date("2026-01-02T00:00:00Z");
    const before = new Date(expiresAt.getTime() - 1);
    for (const s of ["INITIATED", "PENDING_REVIEW", "LIVENESS_PASSED"] as const) {
      expect(statusAt({ status: s, expiresAt }, before)).toBe(s);
      expect(statusAt({ status: s, expiresAt }, expiresAt)).toBe("EXPIRED");
    }
    for (const s of ["COMPLETED", "REJECTED"] as const) expect(statusAt({ status: s, expiresAt }, new Date(expiresAt.getTime() + 1))).toBe(s);
  });

  it("the review queue takes one selfie and one decision", () => {
    expect(nextLivenessStatus("AWAITING_SUBMISSION", "SUBMIT")).toBe("SUBMITTED");
    expect(nextLivenessStatus("SUBMITTED", "APPROVE")).toBe("APPROVED");
    expect(nextLivenessStatus("SUBMITTED", "REJECT")).toBe("REJECTED");
    expect(() => nextLivenessStatus("SUBMITTED", "SUBMIT")).toThrow(expect.objectContaining({ code: "LIVENESS_CHECK_SUBMITTED" }));
    expect(() => nextLivenessStatus("AWAITING_SUBMISSION", "APPROVE")).toThrow(expect.objectContaining({ code: "INVALID_STATE_TRANSITION" }));
    expect(() => nextLivenessStatus("APPROVED", "REJECT")).toThrow(expect.objectContaining({ code: "INVALID_STATE_TRANSITION" }));
  });
});

describe("the start limit (5 per 24 hours per customer)", () => {
  const t0 = new Date("2026-01-01T00:00:00Z").getTime();
  const at = (ms: number) => new Date(t0 + ms);

  it("allows a start while fewer than 5 fall in the last 24 hours, and says when the next one is allowed", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 3 * RESET_LIMITS.windowMs }), { maxLength: 12 }), fc.integer({ min: 0, max: 3 * RESET_LIMITS.windowMs }), (offsets, nowOffset) => {
        const now = at(Math.max(nowOffset, ...offsets));
        const starts = offsets.map(at);
        const inWindow = starts.filter((d) => d.getTime() > now.getTime() - RESET_LIMITS.windowMs).length;
        const wait = resetStartWaitSeconds(starts, now);
        if (inWindow < RESET_LIMITS.starts) return wait === 0;
        // After the wait, fewer than 5 remain in the window; one second earlier, not.
        const later = new Date(now.getTime() + wait * 1000);
        const countAt = (d: Date) => starts.filter((s) => s.getTime() > d.getTime() - RESET_LIMITS.windowMs && s.getTime() <= now.getTime()).length;
        return wait > 0 && countAt(later) < RESET_LIMITS.starts && (wait === 1 || countAt(new Date(later.getTime() - 1000)) >= RESET_LIMITS.starts);
      }),
    );
  });

  it("five starts at once wait 24 hours", () => {
    expect(resetStartWaitSeconds([at(0), at(0), at(0), at(0), at(0)], at(0))).toBe(24 * 3600);
    expect(resetStartWaitSeconds([at(0), at(1000), at(2000), at(3000)], at(4000))).toBe(0);
  });
});

describe("factor resets over the database", () => {
  const customers = new Map<string, ScaCustomer & { platformId: string }>();
  const lines: string[] = [];
  const clock = new ManualClock("2026-01-01T12:00:00.000Z");
  let drop: () => Promise<void>;
  let sca: ReturnType<typeof createClient<typeof ScaService>>;
  let page: ReturnType<typeof createClient<typeof LivenessService>>;
  let queue: ReturnType<typeof createClient<typeof LivenessAdminService>>;
  let admin: ReturnType<typeof createClient<typeof PlatformAdminService>>;

  beforeAll(async () => {
    const opened = await openServiceTestDatabase(service);
    drop = opened.drop;
    const log = createLogger("auth-sessions", "trace", new Writable({ write: (c, _e, done) => (lines.push(c.toString()), done()) }));
    const directory = scaCustomerDirectory(customers);
    const built = buildAuthSessions({ db: opened.db, clock, log, customers: directory });
    const transport = createRouterTransport(built.routes, { router: { interceptors: [appErrorInterceptor] } });
    sca = createClient(ScaService, transport);
    page = createClient(LivenessService, transport);
    queue = createClient(LivenessAdminService, transport);
    admin = createClient(PlatformAdminService, transport);
  });
  afterAll(async () => drop?.());

  async function customerIn(country: string, environment = Environment.PRODUCTION) {
    const { platform } = await admin.createPlatform({ name: "SCA reset", environment, isRegulatedFinancialInstitution: false });
    const id = `Customer:${randomUUID()}`;
    customers.set(id, { id, platformId: platform!.id, country, email: `${randomUUID()}@example.com` });
    return { platformId: platform!.id, customerId: id };
  }

  it("concurrent starts never exceed 5 per customer; the limit lifts 24 hours after the first", async () => {
    const c = await customerIn("FR");
    const results = await Promise.allSettled(Array.from({ length: 9 }, () => sca.startFactorReset({ ...c, factor: "SMS_OTP" })));
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(5);
    for (const r of results) if (r.status === "rejected") expect(String(r.reason)).toMatch(/At most 5 factor resets per 24 hours/);
    await expectPublicError(sca.startFactorReset({ ...c, factor: "SMS_OTP" }), "RATE_LIMITED", "RATE_LIMITED");
    clock.advance(RESET_LIMITS.windowMs);
    expect((await sca.startFactorReset({ ...c, factor: "SMS_OTP" })).resetId).toMatch(/^ScaFactorReset:/);
  });

  it("keeps the liveness token out of the logs, and a selfie decision moves the reset", async () => {
    const c = await customerIn("ES");
    const s = await sca.startFactorReset({ ...c, factor: "SMS_OTP" });
    expect(s.verificationPath).toBe(`/liveness/${s.livenessAccessToken}`);
    const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(32, 1)]);
    await expectPublicError(page.submitLivenessSelfie({ token: s.livenessAccessToken, contentType: "image/jpeg", content: png }), "INVALID", "INVALID_INPUT");
    expect((await page.submitLivenessSelfie({ token: s.livenessAccessToken, contentType: "image/png", content: png })).status).toBe("SUBMITTED");
    const check = (await queue.listLivenessChecks({ platformId: c.platformId })).checks[0]!;
    expect(check.status).toBe("SUBMITTED");
    expect((await sca.getFactorReset({ ...c, resetId: s.resetId })).status).toBe("PENDING_REVIEW");
    await queue.decideLivenessCheck({ checkId: check.id, decision: "APPROVE" });
    expect((await sca.getFactorReset({ ...c, resetId: s.resetId })).status).toBe("LIVENESS_PASSED");
    expect(lines.join("\n")).not.toContain(s.livenessAccessToken);
  });
});
