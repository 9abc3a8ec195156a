import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newClientKeyPair } from "../support/wallet-client.js";
import { individual, uniq } from "./customers-fixtures.js";
import { advanceClock } from "./ledger-helpers.js";
import { eventually, mode, skipReason, startTestSystem, type Caller, type TestSystem } from "./harness.js";

/**
 * One clock per sandbox platform (issue 29, item 7): every expiry a sandbox platform sees follows
 * its sandbox clock (POST /sandbox/clock/advance), as quotes and transfer delays always did —
 * signed-retry challenges, wallet sessions, invitations, hosted KYC links. Rate limits stay on
 * real time. Each test uses a platform of its own (a sandbox clock only moves forward).
 */
describe.skipIf(skipReason())(`sandbox clock moves every expiry (${mode})`, () => {
  let system: TestSystem;

  beforeAll(async () => {
    system = await startTestSystem();
  });
  afterAll(async () => {
    await system?.stop();
  });

  const ms = (iso: string) => new Date(iso).getTime();

  async function customer(p: Caller) {
    const res = await p.call("POST", "/customers", individual({ platformCustomerId: uniq("clock") }));
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body;
  }

  /** A sandbox customer's embedded wallet with one EMAIL_OTP credential and a verified session. */
  async function walletWithSession(p: Caller) {
    const c = await customer(p);
    const account = await eventually(async () => {
      const res = await p.call("GET", `/customers/internal-accounts?customerId=${encodeURIComponent(c.id)}&type=EMBEDDED_WALLET`);
      return res.status === 200 && res.body.data.length > 0 ? res.body.data[0] : undefined;
    });
    const credential = await p.call("POST", "/auth/credentials", { type: "EMAIL_OTP", accountId: account.id, email: `${uniq("w")}@example.com` });
    expect(credential.status, JSON.stringify(credential.body)).toBe(201);
    const session = await p.call("POST", `/auth/credentials/${credential.body.id}/verify`, {
      type: "EMAIL_OTP",
      otp: "000000",
      clientPublicKey: newClientKeyPair().clientPublicKey,
    });
    expect(session.status, JSON.stringify(session.body)).toBe(200);
    return { accountId: account.id as string, credentialId: credential.body.id as string, session: session.body };
  }

  it("a signed-retry challenge expires on the sandbox clock: its expiresAt is 5 sandbox minutes away, and a retry after advancing 301 s answers 401", async () => {
    const p = await system.createPlatform({ name: "Clock signed retry" });
    const { session } = await walletWithSession(p);

    // Move the clock first: a challenge issued now expires 5 minutes after the *sandbox* time.
    const moved = await advanceClock(p, 3600);
    const challenge = await p.call("DELETE", `/auth/sessions/${session.id}`);
    expect(challenge.status, JSON.stringify(challenge.body)).toBe(202);
    expect(ms(challenge.body.expiresAt)).toBeGreaterThanOrEqual(ms(moved.now) + 300_000);
    expect(JSON.parse(challenge.body.payloadToSign).expiresAt).toBe(challenge.body.expiresAt);

    await advanceClock(p, 301);
    const retry = await p.call("DELETE", `/auth/sessions/${session.id}`, undefined, {
      "Request-Id": challenge.body.requestId,
      "Service-Wallet-Signature": "sandbox-valid-signature",
    });
    expect(retry.status, JSON.stringify(retry.body)).toBe(401);
    expect(retry.body.details.reason).toBe("Signed-retry challenge expired");
  });

  it("a wallet session expires on the sandbox clock: 15 sandbox minutes after it is issued it is no longer listed", async () => {
    const p = await system.createPlatform({ name: "Clock sessions" });
    const { accountId, session } = await walletWithSession(p);
    expect(ms(session.expiresAt) - ms(session.createdAt)).toBe(15 * 60_000);
    const listed = await p.call("GET", `/auth/sessions?accountId=${encodeURIComponent(accountId)}`);
    expect(listed.body.data.map((s: { id: string }) => s.id)).toContain(session.id);

    await advanceClock(p, 15 * 60 + 1);
    const after = await p.call("GET", `/auth/sessions?accountId=${encodeURIComponent(accountId)}`);
    expect(after.status, JSON.stringify(after.body)).toBe(200);
    expect(after.body.data.map((s: { id: string }) => s.id)).not.toContain(session.id);
  });

  it("the challenge re-issue limit stays on real time: advancing the clock does not lift the 429", async () => {
    const p = await system.createPlatform({ name: "Clock rate limit" });
    const { credentialId } = await walletWithSession(p);
    const first = await p.call("POST", `/auth/credentials/${credentialId}/challenge`, {});
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    await advanceClock(p, 120);
    const again = await p.call("POST", `/auth/credentials/${credentialId}/challenge`, {});
    expect(again.status, JSON.stringify(again.body)).toBe(429);
    expect(again.body.code).toBe("RATE_LIMITED");
  });

  it("an invitation expires on the sandbox clock: PENDING until the clock passes expiresAt, then EXPIRED and claiming answers 400 INVITATION_EXPIRED", async () => {
    const p = await system.createPlatform({ name: "Clock invitations" });
    const inviter = await customer(p);
    const expiresAt = new Date(Date.now() + 10 * 60_000).toISOString();
    const created = await p.call("POST", "/invitations", { inviterUma: inviter.umaAddress, expiresAt });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.status).toBe("PENDING");

    await advanceClock(p, 11 * 60);
    const read = await p.call("GET", `/invitations/${created.body.code}`);
    expect(read.status, JSON.stringify(read.body)).toBe(200);
    expect(read.body.status).toBe("EXPIRED");
    const claim = await p.call("POST", `/invitations/${created.body.code}/claim`, { inviteeUma: "$bob@other.example" });
    expect(claim.status, JSON.stringify(claim.body)).toBe(400);
    expect(claim.body.code).toBe("INVITATION_EXPIRED");

    // "In the future" is judged on the platform's time too: real now + 5 min is already past.
    const past = await p.call("POST", "/invitations", { inviterUma: inviter.umaAddress, expiresAt: new Date(Date.now() + 5 * 60_000).toISOString() });
    expect(past.status, JSON.stringify(past.body)).toBe(400);
    expect(past.body.details.errors).toEqual([{ field: "body.expiresAt", reason: "must be in the future" }]);
  });

  it("a hosted KYC link expires on the sandbox clock: its expiresAt is a TTL after the sandbox time, and the page answers 410 once the clock passes it", async () => {
    const p = await system.createPlatform({ name: "Clock KYC links" });
    const c = await customer(p);
    const moved = await advanceClock(p, 3600);
    const link = await p.call("POST", `/customers/${c.id}/kyc-link`);
    expect(link.status, JSON.stringify(link.body)).toBe(200);
    const ttlMs = ms(link.body.expiresAt) - ms(moved.now);
    expect(ttlMs).toBeGreaterThanOrEqual(24 * 3600_000);
    expect(ttlMs).toBeLessThan(24 * 3600_000 + 60_000);
    const path = new URL(link.body.kycUrl).pathname;
    expect((await system.raw("GET", path)).status).toBe(200);

    await advanceClock(p, 24 * 3600 + 1);
    expect((await system.raw("GET", path)).status).toBe(410);
  });
  it("the webhook secret's rotation window runs on the sandbox clock: the previous secret's window ends 24 sandbox hours after a rotation", async () => {
    const p = await system.createPlatform({ name: "Clock secret rotation" });
    const before = (await p.call("GET", "/config/webhook-secret")).body;
    const moved = await advanceClock(p, 3600);
    const rotated = await p.call("POST", "/config/webhook-secret/rotate");
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
    expect(rotated.body.secret).not.toBe(before.secret);
    const windowMs = ms(rotated.body.previousSecretExpiresAt) - ms(moved.now);
    expect(windowMs).toBeGreaterThanOrEqual(24 * 3600_000);
    expect(windowMs).toBeLessThan(24 * 3600_000 + 60_000);

    await advanceClock(p, 24 * 3600 + 60);
    const after = (await p.call("GET", "/config/webhook-secret")).body;
    expect(after.secret).toBe(rotated.body.secret);
    // The window is over on the platform's clock: the previous secret is no longer announced.
    expect(after.previousSecretExpiresAt ?? null).toBeNull();
  });
});
