import { createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { address, individual, uniq } from "./customers-fixtures.js";
import { GRID, gridViolations, type GridSchema } from "./grid-schema.js";
import { mode, skipReason, startTestSystem, type TestSystem } from "./harness.js";

/**
 * Grid's /sca/* factor, login and security-event routes (issue 27, docs/sca.md): TOTP enrolment
 * and logins, SMS_OTP logins (sandbox code 123456), and the failed-login lockout.
 */
let sys: TestSystem;
beforeAll(async () => {
  if (skipReason()) return;
  sys = await startTestSystem();
}, 120_000);
afterAll(async () => sys?.stop());

/** RFC 4648 Base32 and RFC 6238 TOTP (SHA-1, 30 s, 6 digits), written here from the RFCs, not the service's code. */
function fromBase32(s: string): Buffer {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  let bits = "";
  for (const ch of s.replace(/=+$/, "")) bits += alphabet.indexOf(ch).toString(2).padStart(5, "0");
  const bytes: number[] = [];
  for (let i = 0; i + 8 <= bits.length; i += 8) bytes.push(parseInt(bits.slice(i, i + 8), 2));
  return Buffer.from(bytes);
}
function totp(secretBase32: string, step: number): string {
  const msg = Buffer.alloc(8);
  msg.writeBigUInt64BE(BigInt(step));
  const h = createHmac("sha1", fromBase32(secretBase32)).update(msg).digest();
  const o = h[19]! & 0xf;
  return String(((h[o]! & 0x7f) << 24 | h[o + 1]! << 16 | h[o + 2]! << 8 | h[o + 3]!) % 1_000_000).padStart(6, "0");
}
/** Grid's published schema accepts the answer: its own for a 2xx, Grid's Error otherwise. */
function expectGrid<T extends { status: number; body: unknown }>(schema: GridSchema, res: T): T {
  expect(gridViolations(res.status < 300 ? schema : GRID.Error, res.body), JSON.stringify(res.body)).toEqual([]);
  return res;
}

const nowStep = () => Math.floor(Date.now() / 30_000);

async function customerIn(country: string) {
  const p = await sys.createPlatform();
  const created = await p.call("POST", "/customers", individual({ address: { ...address, country }, email: `${uniq("sca")}@example.com` }));
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return { p, id: created.body.id as string };
}

describe("the Grid schema check itself", () => {
  it("flags a missing required field, a wrong type, an enum miss and a bad date-time", () => {
    expect(gridViolations(GRID.TotpEnrollmentConfirmResponse, { type: "TOTP" })).toEqual(["$.recoveryCodes: required"]);
    expect(gridViolations(GRID.RecordSecurityEventResponse, { eventType: "LOGIN", suspended: "no", failedAttempts: 1.5, lockedUntil: "tomorrow" })).toHaveLength(4);
    expect(gridViolations(GRID.ScaLoginStart, { factor: "SMS_OTP", challengeId: null, expiresAt: null })).toEqual([]);
  });
});

describe.skipIf(Boolean(skipReason()))(`SCA factors and logins (${mode})`, () => {
  it("enrols a TOTP authenticator, logs in with its codes (each good once) and with a recovery code (once)", async () => {
    const { p, id } = await customerIn("FR");
    const q = `?customerId=${encodeURIComponent(id)}`;
    expect(expectGrid(GRID.ScaFactorList, await p.call("GET", `/sca/factors${q}`)).body).toEqual({ factors: [{ factor: "SMS_OTP" }] });

    const passkey = await p.call("POST", `/sca/factors${q}`, { type: "PASSKEY" });
    expect(passkey.status).toBe(400);
    expect(passkey.body.code).toBe("SCA_FACTOR_NOT_SUPPORTED");
    const passkeyLogin = await p.call("POST", `/sca/login/complete${q}`, { factor: "PASSKEY", endUserIpAddress: "203.0.113.42", passkeyAssertion: {}, origin: "https://app.example.com" });
    expect(passkeyLogin.status).toBe(400);
    expect(passkeyLogin.body.code).toBe("SCA_FACTOR_NOT_SUPPORTED");
    const noTotp = await p.call("POST", `/sca/login/start${q}`, { factor: "TOTP" });
    expect(noTotp.status).toBe(409);
    expect(noTotp.body.code).toBe("SCA_FACTOR_NOT_ENROLLED");

    const start = expectGrid(GRID.TotpEnrollmentStart, await p.call("POST", `/sca/factors${q}`, { type: "TOTP" }));
    expect(start.status, JSON.stringify(start.body)).toBe(200);
    const secret = start.body.secret as string;
    expect(start.body.secretBase32Encoded).toBe(secret);
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(start.body.totpUri).toMatch(new RegExp(`^otpauth://totp/.+\\?secret=${secret}&issuer=Corridor`));

    // A code that is not the authenticator's (and not the sandbox code) does not confirm.
    const step = nowStep();
    const wrongCode = ["000000", "111111", "222222"].find((c) => ![step - 1, step, step + 1].some((s) => totp(secret, s) === c))!;
    const wrong = await p.call("POST", `/sca/factors/confirm${q}`, { type: "TOTP", secret, code: wrongCode });
    expect(wrong.status).toBe(400);
    expect(wrong.body.code).toBe("SCA_CODE_INVALID");
    const otherSecret = await p.call("POST", `/sca/factors/confirm${q}`, { type: "TOTP", secret: "A".repeat(32), code: totp(secret, step) });
    expect(otherSecret.status).toBe(409);
    expect(otherSecret.body.code).toBe("SCA_FACTOR_NOT_ENROLLED");

    const confirmed = expectGrid(GRID.TotpEnrollmentConfirmResponse, await p.call("POST", `/sca/factors/confirm${q}`, { type: "TOTP", secret, code: totp(secret, step) }));
    expect(confirmed.status, JSON.stringify(confirmed.body)).toBe(200);
    expect(confirmed.body.type).toBe("TOTP");
    expect(confirmed.body.recoveryCodes).toHaveLength(8);
    for (const c of confirmed.body.recoveryCodes) expect(c).toMatch(/^[A-Z2-7]{4}-[A-Z2-7]{4}-[A-Z2-7]{4}$/);
    expect(expectGrid(GRID.ScaFactorList, await p.call("GET", `/sca/factors${q}`)).body).toEqual({ factors: [{ factor: "SMS_OTP" }, { factor: "TOTP" }] });
    const again = await p.call("POST", `/sca/factors${q}`, { type: "TOTP" });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe("SCA_FACTOR_ALREADY_ENROLLED");

    expect(expectGrid(GRID.ScaLoginStart, await p.call("POST", `/sca/login/start${q}`, { factor: "TOTP" })).body).toEqual({ factor: "TOTP" });
    const complete = async (code: string) => expectGrid(GRID.ScaLoginComplete, await p.call("POST", `/sca/login/complete${q}`, { factor: "TOTP", endUserIpAddress: "203.0.113.42", code }));
    // The confirming code was used: the same step's code is refused; the next step's is good once.
    const replay = await complete(totp(secret, step));
    expect(replay.status).toBe(400);
    expect(replay.body.code).toBe("SCA_CODE_INVALID");
    const next = await complete(totp(secret, step + 1));
    expect(next.status, JSON.stringify(next.body)).toBe(200);
    expect(next.body).toEqual({ status: "SUCCESS" });
    expect((await complete(totp(secret, step + 1))).status).toBe(400);

    const recovery = confirmed.body.recoveryCodes[0] as string;
    expect((await complete(recovery)).body).toEqual({ status: "SUCCESS" });
    expect((await complete(recovery)).status).toBe(400);
  });

  it("logs in with an SMS_OTP challenge (sandbox code 123456), one code per 30 seconds", async () => {
    const { p, id } = await customerIn("DE");
    const q = `?customerId=${encodeURIComponent(id)}`;
    const start = expectGrid(GRID.ScaLoginStart, await p.call("POST", `/sca/login/start${q}`, { factor: "SMS_OTP" }));
    expect(start.status, JSON.stringify(start.body)).toBe(200);
    expect(start.body.factor).toBe("SMS_OTP");
    expect(start.body.challengeId).toMatch(/^ScaChallenge:/);
    expect(Date.parse(start.body.expiresAt)).toBeGreaterThan(Date.now());
    const tooSoon = await p.call("POST", `/sca/login/start${q}`, { factor: "SMS_OTP" });
    expect(tooSoon.status).toBe(429);

    const complete = async (body: Record<string, unknown>) =>
      expectGrid(GRID.ScaLoginComplete, await p.call("POST", `/sca/login/complete${q}`, { factor: "SMS_OTP", endUserIpAddress: "203.0.113.42", ...body }));
    const noChallenge = await complete({ code: "123456" });
    expect(noChallenge.status).toBe(400);
    const stale = await complete({ code: "123456", challengeId: "ScaChallenge:019a8f3e-5b0c-7a41-8d9f-2e3c4b5a6978" });
    expect(stale.status).toBe(409);
    expect(stale.body.code).toBe("SCA_NOT_PENDING");
    const wrong = await complete({ code: "000001", challengeId: start.body.challengeId });
    expect(wrong.status).toBe(400);
    expect(wrong.body.code).toBe("SCA_CODE_INVALID");
    const ok = await complete({ code: "123456", challengeId: start.body.challengeId });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body).toEqual({ status: "SUCCESS" });
    // A satisfied login challenge is spent.
    expect((await complete({ code: "123456", challengeId: start.body.challengeId })).status).toBe(409);
  });

  it("failed logins lock the customer out (423 ACCOUNT_LOCKED) until RESET_PASSWORD_COMPLETED; 10 suspend", async () => {
    const { p, id } = await customerIn("NL");
    const q = `?customerId=${encodeURIComponent(id)}`;
    const record = async (eventType: string) => expectGrid(GRID.RecordSecurityEventResponse, await p.call("POST", `/sca/record-event${q}`, { eventType }));
    const bad = await record("SIGNED_IN");
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe("INVALID_INPUT");

    for (let i = 1; i <= 4; i++) expect((await record("FAILED_LOGIN_ATTEMPT")).body).toEqual({ eventType: "FAILED_LOGIN_ATTEMPT", suspended: false, lockedUntil: null, failedAttempts: i });
    expect((await p.call("GET", `/sca/factors${q}`)).status).toBe(200);
    const fifth = await record("FAILED_LOGIN_ATTEMPT");
    expect(fifth.body).toMatchObject({ suspended: false, failedAttempts: 5 });
    expect(Date.parse(fifth.body.lockedUntil) - Date.now()).toBeGreaterThan(14 * 60_000);
    const locked = await p.call("GET", `/sca/factors${q}`);
    expect(locked.status).toBe(423);
    expect(locked.body).toMatchObject({ code: "ACCOUNT_LOCKED", details: { suspended: false, lockedUntil: fifth.body.lockedUntil } });
    expect((await p.call("POST", `/sca/login/start${q}`, { factor: "SMS_OTP" })).status).toBe(423);

    for (let i = 6; i <= 10; i++) await record("FAILED_LOGIN_ATTEMPT");
    const suspended = await p.call("GET", `/sca/factors${q}`);
    expect(suspended.status).toBe(423);
    expect(suspended.body.details).toEqual({ suspended: true, lockedUntil: null });

    expect((await record("RESET_PASSWORD_COMPLETED")).body).toEqual({ eventType: "RESET_PASSWORD_COMPLETED", suspended: false, lockedUntil: null, failedAttempts: 0 });
    expect((await p.call("GET", `/sca/factors${q}`)).status).toBe(200);
  });

  it("outside SCA-regulated regions every /sca route is 409 SCA_NOT_REQUIRED; an unknown customer is 404", async () => {
    const { p, id } = await customerIn("US");
    const q = `?customerId=${encodeURIComponent(id)}`;
    for (const [method, path, body] of [
      ["GET", "/sca/factors", undefined],
      ["POST", "/sca/factors", { type: "TOTP" }],
      ["POST", "/sca/login/start", { factor: "SMS_OTP" }],
      ["POST", "/sca/record-event", { eventType: "FAILED_LOGIN_ATTEMPT" }],
    ] as const) {
      const res = await p.call(method, `${path}${q}`, body);
      expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBe(409);
      expect(res.body.code).toBe("SCA_NOT_REQUIRED");
    }
    const missing = await p.call("GET", `/sca/factors?customerId=${encodeURIComponent("Customer:019a8f3e-5b0c-7a41-8d9f-2e3c4b5a6978")}`);
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe("USER_NOT_FOUND");
  });
});
