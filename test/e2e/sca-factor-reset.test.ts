import { createClient, type Client } from "@connectrpc/connect";
import { LivenessAdminService } from "@corridor/proto/corridor/auth_sessions/v1/liveness_service_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { address, individual, uniq } from "./customers-fixtures.js";
import { GRID, gridViolations, type GridSchema } from "./grid-schema.js";
import { mode, skipReason, startTestSystem, type Caller, type TestSystem } from "./harness.js";

/**
 * Grid's SCA factor reset (issue 27, docs/sca.md "Factor reset"): a reset gated on a liveness
 * check. Sandbox platforms pass or fail the check on the hosted page; production platforms'
 * end users upload a selfie that the operator approves or rejects (LivenessAdminService, the RPC
 * behind `npm run admin -- liveness ...`). Every answer is checked against Grid's schema.
 */
let sys: TestSystem;
let admin: Client<typeof LivenessAdminService>;
beforeAll(async () => {
  if (skipReason()) return;
  sys = await startTestSystem();
  admin = createClient(LivenessAdminService, sys.transportFor("auth-sessions"));
}, 120_000);
afterAll(async () => sys?.stop());

function expectGrid<T extends { status: number; body: unknown }>(schema: GridSchema, res: T): T {
  expect(gridViolations(res.status < 300 ? schema : GRID.Error, res.body), JSON.stringify(res.body)).toEqual([]);
  return res;
}

const IP = "203.0.113.42";
const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46, 0, 1]), Buffer.alloc(64, 7)]);

async function customerIn(p: Caller, country: string) {
  const created = await p.call("POST", "/customers", individual({ platformCustomerId: uniq("reset"), address: { ...address, country }, email: `${uniq("reset")}@example.com` }));
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return { id: created.body.id as string, q: `?customerId=${encodeURIComponent(created.body.id)}` };
}

const start = async (p: Caller, q: string, factor: string) => expectGrid(GRID.TwoFactorResetStart, await p.call("POST", `/sca/factors/reset${q}`, { factor, endUserIpAddress: IP }));
const status = async (p: Caller, q: string, resetId: string) => expectGrid(GRID.TwoFactorResetStatus, await p.call("GET", `/sca/factors/reset/${encodeURIComponent(resetId)}${q}`));
const complete = async (p: Caller, q: string, resetId: string, body: Record<string, unknown> = {}) =>
  expectGrid(GRID.Error, await p.call("POST", `/sca/factors/reset/${encodeURIComponent(resetId)}/complete${q}`, { endUserIpAddress: IP, ...body }));
const page = (link: string) => sys.raw("GET", new URL(link).pathname);
const choose = (link: string, outcome: string) =>
  sys.raw("POST", `${new URL(link).pathname}/decision`, { body: `outcome=${outcome}`, headers: { "content-type": "application/x-www-form-urlencoded" } });
const upload = (link: string, bytes: Buffer, type: string) => {
  const f = new FormData();
  f.append("file", new Blob([bytes], { type }), "selfie.jpg");
  return sys.raw("POST", `${new URL(link).pathname}/selfie`, { body: f });
};

describe.skipIf(Boolean(skipReason()))(`SCA factor reset (${mode})`, () => {
  it("sandbox: resets a TOTP factor after the page's pass control; the reset is then used once", async () => {
    const p = await sys.createPlatform();
    const { q } = await customerIn(p, "FR");
    const enrol = await p.call("POST", `/sca/factors${q}`, { type: "TOTP" });
    expect((await p.call("POST", `/sca/factors/confirm${q}`, { type: "TOTP", secret: enrol.body.secret, code: "123456" })).status).toBe(200);

    const s = await start(p, q, "TOTP");
    expect(s.status, JSON.stringify(s.body)).toBe(201);
    expect(s.body.resetId).toMatch(/^ScaFactorReset:/);
    expect(s.body.livenessAccessToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(s.body.verificationLink).toBe(`${sys.url}/liveness/${s.body.livenessAccessToken}`);
    expect(Date.parse(s.body.expiresAt) - Date.now()).toBeGreaterThan(23 * 3600_000);
    expect((await status(p, q, s.body.resetId)).body).toMatchObject({ status: "INITIATED", factor: "TOTP" });

    const notReady = await complete(p, q, s.body.resetId);
    expect(notReady.status).toBe(400);
    expect(notReady.body).toMatchObject({ code: "SCA_RESET_NOT_READY", details: { status: "INITIATED" } });

    const shown = await page(s.body.verificationLink);
    expect(shown.status).toBe(200);
    expect(shown.body).toContain('value="PASS"');
    expect(shown.body).toContain('value="FAIL"');
    expect(shown.body).not.toContain('type="file"');
    const passed = await choose(s.body.verificationLink, "PASS");
    expect(passed.status).toBe(200);
    expect(passed.body).toContain('<strong id="status">APPROVED</strong>');
    // The page's controls decide once.
    expect((await choose(s.body.verificationLink, "FAIL")).status).toBe(409);
    expect((await status(p, q, s.body.resetId)).body.status).toBe("LIVENESS_PASSED");

    const done = await p.call("POST", `/sca/factors/reset/${encodeURIComponent(s.body.resetId)}/complete${q}`, { endUserIpAddress: IP });
    expect(done.status, JSON.stringify(done.body)).toBe(204);
    expect((await status(p, q, s.body.resetId)).body.status).toBe("COMPLETED");
    // The lost authenticator is gone: the customer enrols again.
    expect((await p.call("GET", `/sca/factors${q}`)).body).toEqual({ factors: [{ factor: "SMS_OTP" }] });
    expect((await p.call("POST", `/sca/login/start${q}`, { factor: "TOTP" })).body.code).toBe("SCA_FACTOR_NOT_ENROLLED");
    expect((await p.call("POST", `/sca/factors${q}`, { type: "TOTP" })).status).toBe(200);

    const twice = await complete(p, q, s.body.resetId);
    expect(twice.status).toBe(400);
    expect(twice.body).toMatchObject({ code: "SCA_RESET_CLOSED", details: { status: "COMPLETED" } });
  });

  it("sandbox: a failed liveness check rejects the reset for good; the reset window closes on the sandbox clock", async () => {
    const p = await sys.createPlatform();
    const { q } = await customerIn(p, "DE");
    const noTotp = await start(p, q, "TOTP");
    expect(noTotp.status).toBe(409);
    expect(noTotp.body.code).toBe("SCA_FACTOR_NOT_ENROLLED");
    const passkey = await start(p, q, "PASSKEY");
    expect(passkey.status).toBe(400);
    expect(passkey.body.code).toBe("SCA_FACTOR_NOT_SUPPORTED");

    const failed = await start(p, q, "SMS_OTP");
    expect((await choose(failed.body.verificationLink, "FAIL")).body).toContain('<strong id="status">REJECTED</strong>');
    expect((await status(p, q, failed.body.resetId)).body.status).toBe("REJECTED");
    const closed = await complete(p, q, failed.body.resetId, { mobile: { countryCode: "+49", number: "15112345678" } });
    expect(closed.status).toBe(400);
    expect(closed.body).toMatchObject({ code: "SCA_RESET_CLOSED", details: { status: "REJECTED" } });
    // A sandbox check takes no selfie.
    const open = await start(p, q, "SMS_OTP");
    expect((await upload(open.body.verificationLink, JPEG, "image/jpeg")).status).toBe(400);

    expect((await p.call("POST", "/sandbox/clock/advance", { seconds: 24 * 3600 + 1 })).status).toBe(200);
    expect((await status(p, q, open.body.resetId)).body.status).toBe("EXPIRED");
    const gone = await page(open.body.verificationLink);
    expect(gone.status).toBe(410);
    expect(gone.body).toContain("This verification link has expired");
    expect((await complete(p, q, open.body.resetId, { mobile: { countryCode: "+49", number: "15112345678" } })).body.code).toBe("SCA_RESET_CLOSED");
  });

  it("production: the end user's selfie goes to the operator's review; an approval lets the SMS_OTP reset enrol the new mobile", async () => {
    const p = await sys.createPlatform({ environment: "PRODUCTION", name: "SCA reset e2e" });
    const { id, q } = await customerIn(p, "NL");
    const s = await start(p, q, "SMS_OTP");
    expect(s.status, JSON.stringify(s.body)).toBe(201);
    const link = s.body.verificationLink as string;

    const shown = await page(link);
    expect(shown.status).toBe(200);
    expect(shown.body).toContain('type="file"');
    expect(shown.body).not.toContain('value="PASS"');
    // No pass control on a production page, and none behind it.
    expect((await choose(link, "PASS")).status).toBe(403);
    const notImage = await upload(link, Buffer.from("not a photo at all"), "image/jpeg");
    expect(notImage.status).toBe(400);
    expect(notImage.body).toContain("This photo was not accepted");
    const sent = await upload(link, JPEG, "image/jpeg");
    expect(sent.status).toBe(200);
    expect(sent.body).toContain('<strong id="status">SUBMITTED</strong>');
    expect((await upload(link, JPEG, "image/jpeg")).status).toBe(409);
    expect((await status(p, q, s.body.resetId)).body.status).toBe("PENDING_REVIEW");
    expect((await complete(p, q, s.body.resetId, { mobile: { countryCode: "+31", number: "612345678" } })).body).toMatchObject({ code: "SCA_RESET_NOT_READY", details: { status: "PENDING_REVIEW" } });

    const { checks } = await admin.listLivenessChecks({ status: "SUBMITTED", platformId: p.platformId });
    expect(checks).toHaveLength(1);
    const check = checks[0]!;
    expect(check).toMatchObject({ customerId: id, resetId: s.body.resetId, environment: "PRODUCTION", selfieContentType: "image/jpeg" });
    expect(Number(check.selfieSizeBytes)).toBe(JPEG.length);
    expect(Buffer.from((await admin.getLivenessSelfie({ checkId: check.id })).content).equals(JPEG)).toBe(true);
    await expect(admin.decideLivenessCheck({ checkId: check.id, decision: "REJECT", reason: "" })).rejects.toThrow(/reason/);

    const decided = await admin.decideLivenessCheck({ checkId: check.id, decision: "APPROVE" });
    expect(decided.check?.status).toBe("APPROVED");
    await expect(admin.decideLivenessCheck({ checkId: check.id, decision: "REJECT", reason: "changed my mind" })).rejects.toThrow(/final/);
    expect((await status(p, q, s.body.resetId)).body.status).toBe("LIVENESS_PASSED");

    const noMobile = await complete(p, q, s.body.resetId);
    expect(noMobile.status).toBe(400);
    expect(noMobile.body.code).toBe("INVALID_INPUT");
    expect(noMobile.body.details.errors.map((e: { field: string }) => e.field).sort()).toEqual(["body.mobile.countryCode", "body.mobile.number"]);
    const done = await p.call("POST", `/sca/factors/reset/${encodeURIComponent(s.body.resetId)}/complete${q}`, { endUserIpAddress: IP, mobile: { countryCode: "+31", number: "612345678" } });
    expect(done.status, JSON.stringify(done.body)).toBe(204);
    expect((await status(p, q, s.body.resetId)).body.status).toBe("COMPLETED");

    // A rejected check rejects its reset.
    const again = await start(p, q, "SMS_OTP");
    expect((await upload(again.body.verificationLink, JPEG, "image/jpeg")).status).toBe(200);
    const second = (await admin.listLivenessChecks({ status: "SUBMITTED", platformId: p.platformId })).checks[0]!;
    expect(second.resetId).toBe(again.body.resetId);
    expect((await admin.decideLivenessCheck({ checkId: second.id, decision: "REJECT", reason: "the face does not match the passport" })).check?.reason).toBe("the face does not match the passport");
    expect((await status(p, q, again.body.resetId)).body.status).toBe("REJECTED");
  });

  it("allows 5 starts per 24 hours per customer (429 with Retry-After), and refuses what the other /sca routes refuse", async () => {
    const p = await sys.createPlatform();
    const { q } = await customerIn(p, "IT");
    const other = await customerIn(p, "IT");
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await start(p, q, "SMS_OTP");
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      ids.push(r.body.resetId);
    }
    const sixth = await start(p, q, "SMS_OTP");
    expect(sixth.status).toBe(429);
    expect(sixth.body.code).toBe("RATE_LIMITED");
    const retryAfter = Number(sixth.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(23 * 3600);
    expect(retryAfter).toBeLessThanOrEqual(24 * 3600);
    // The limit is the customer's: another customer starts.
    expect((await start(p, other.q, "SMS_OTP")).status).toBe(201);

    // Another customer's reset, or an unknown one, is not found.
    expect((await status(p, other.q, ids[0]!)).body.code).toBe("SCA_RESET_NOT_FOUND");
    expect((await status(p, q, "ScaFactorReset:019a8f3e-5b0c-7a41-8d9f-2e3c4b5a6978")).status).toBe(404);
    expect((await complete(p, other.q, ids[0]!)).body.code).toBe("SCA_RESET_NOT_FOUND");

    // A locked-out customer: 423 on start and complete (as the other /sca routes).
    for (let i = 0; i < 5; i++) await p.call("POST", `/sca/record-event${other.q}`, { eventType: "FAILED_LOGIN_ATTEMPT" });
    const locked = await start(p, other.q, "SMS_OTP");
    expect(locked.status).toBe(423);
    expect(locked.body.code).toBe("ACCOUNT_LOCKED");

    const us = await customerIn(p, "US");
    for (const res of [await start(p, us.q, "SMS_OTP"), await status(p, us.q, ids[0]!), await complete(p, us.q, ids[0]!)]) {
      expect(res.status, JSON.stringify(res.body)).toBe(409);
      expect(res.body.code).toBe("SCA_NOT_REQUIRED");
    }
    const missing = await start(p, `?customerId=${encodeURIComponent("Customer:019a8f3e-5b0c-7a41-8d9f-2e3c4b5a6978")}`, "SMS_OTP");
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe("USER_NOT_FOUND");
    // Grid requires the end user's IP address on both calls.
    expect((await p.call("POST", `/sca/factors/reset${q}`, { factor: "SMS_OTP" })).status).toBe(400);
    expect((await p.call("POST", `/sca/factors/reset/${encodeURIComponent(ids[0]!)}/complete${q}`, {})).status).toBe(400);
    expect((await page(`${sys.url}/liveness/not-a-token`)).status).toBe(404);
  });
});
