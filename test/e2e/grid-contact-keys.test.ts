import { randomUUID } from "node:crypto";
import { p256 } from "@noble/curves/nist.js";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { E2E_WALLET_ENCRYPTION_KEY } from "../infra/split-setup.js";
import { otpCodeOf, remoteMailbox, startMailCatcher, type MailCatcher, type Mailbox } from "../support/mail-catcher.js";
import { newClientKeyPair, openSealed, stamp } from "../support/wallet-client.js";
import { advanceClock } from "./ledger-helpers.js";
import { individual } from "./customers-fixtures.js";
import { eventually, mode, skipReason, startTestSystem, type Caller, type TestSystem } from "./harness.js";

// Issue 27, Grid parity: contact verification (verify-email / verify-phone and /confirm), session
// refresh (delegated keys: grid-cards.test.ts), through the public API in both run modes. Codes go to a local SMTP
// catcher (embedded: started here; split: by test/infra/split-setup.ts, read over HTTP).

let sys: TestSystem;
let mailbox: Mailbox;
let catcher: MailCatcher | undefined;

beforeAll(async () => {
  if (skipReason()) return;
  if (mode === "embedded") {
    process.env.CORRIDOR_WALLET_ENCRYPTION_KEY = E2E_WALLET_ENCRYPTION_KEY;
    catcher = await startMailCatcher();
    process.env.CORRIDOR_SMTP_URL = catcher.smtpUrl;
    mailbox = catcher;
  } else {
    mailbox = remoteMailbox(inject("splitMailboxUrl")!);
  }
  sys = await startTestSystem();
});
afterAll(async () => {
  await sys?.stop();
  await catcher?.close();
});

async function walletAccount(p: Caller): Promise<string> {
  const created = await p.call("POST", "/customers", individual());
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const account = await eventually(async () => {
    const res = await p.call("GET", `/customers/internal-accounts?customerId=${encodeURIComponent(created.body.id)}&type=EMBEDDED_WALLET`);
    return res.status === 200 && res.body.data.length > 0 ? res.body.data[0] : undefined;
  });
  return account.id;
}

/** A production EMAIL_OTP session on a new wallet: its id and signing key, opened from the sealed key. */
async function productionSession(p: Caller, accountId: string) {
  const email = `keys-${randomUUID()}@example.com`;
  const created = await p.call("POST", "/auth/credentials", { type: "EMAIL_OTP", accountId, email });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const code = otpCodeOf((await eventually(async () => (await mailbox.mailsTo(email))[0]))!);
  const client = newClientKeyPair();
  const verified = await p.call("POST", `/auth/credentials/${created.body.id}/verify`, { type: "EMAIL_OTP", otp: code, clientPublicKey: client.clientPublicKey });
  expect(verified.status, JSON.stringify(verified.body)).toBe(200);
  return { sessionId: verified.body.id as string, key: await openSealed(verified.body.encryptedSessionSigningKey, client) };
}

const signedBy = (key: Uint8Array, c: { payloadToSign: string; requestId: string }) => ({ "Request-Id": c.requestId, "Service-Wallet-Signature": stamp(c.payloadToSign, key) });

describe.skipIf(Boolean(skipReason()))("contact verification (Grid's verify-email / verify-phone)", () => {
  it("sends a code by mail, refuses wrong codes with attemptsLeft, and the mailed code marks contactVerification.email VERIFIED", async () => {
    const p = await sys.createPlatform({ environment: "PRODUCTION" });
    const email = `cv-${randomUUID()}@example.com`;
    const customer = await p.call("POST", "/customers", { ...individual(), email });
    expect(customer.status, JSON.stringify(customer.body)).toBe(201);
    expect(customer.body.contactVerification).toEqual({ email: "PENDING" });
    const sent = await p.call("POST", `/customers/${customer.body.id}/verify-email`);
    expect(sent.status, JSON.stringify(sent.body)).toBe(204);
    const code = otpCodeOf((await eventually(async () => (await mailbox.mailsTo(email))[0]))!);
    const wrong = await p.call("POST", `/customers/${customer.body.id}/verify-email/confirm`, { code: code === "123456" ? "123457" : "123456" });
    expect(wrong.status, JSON.stringify(wrong.body)).toBe(400);
    expect(wrong.body.code).toBe("INVALID_VERIFICATION_CODE");
    expect(wrong.body.details.attemptsLeft).toBe(4);
    const ok = await p.call("POST", `/customers/${customer.body.id}/verify-email/confirm`, { code });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.contactVerification).toEqual({ email: "VERIFIED" });
    expect((await p.call("GET", `/customers/${customer.body.id}`)).body.contactVerification).toEqual({ email: "VERIFIED" });
    const again = await p.call("POST", `/customers/${customer.body.id}/verify-email`);
    expect(again.status).toBe(409);
    expect(again.body.code).toBe("CONTACT_ALREADY_VERIFIED");
    const phone = await p.call("POST", `/customers/${customer.body.id}/verify-phone`);
    expect(phone.status).toBe(409);
    expect(phone.body.code).toBe("CONTACT_VERIFICATION_NOT_REQUIRED");
  });

  it("binds the attempt limit under 12 concurrent wrong guesses (Postgres row lock): exactly 5 counted, the rest refused, then even the right code needs a new send", async () => {
    const p = await sys.createPlatform({ environment: "SANDBOX" });
    const email = `race-${randomUUID()}@example.com`;
    const customer = await p.call("POST", "/customers", { ...individual(), email });
    expect((await p.call("POST", `/customers/${customer.body.id}/verify-email`)).status).toBe(204);
    const code = otpCodeOf((await eventually(async () => (await mailbox.mailsTo(email))[0]))!);
    const guesses = await Promise.all(
      Array.from({ length: 12 }, (_, i) => {
        const guess = String(100000 + i);
        return p.call("POST", `/customers/${customer.body.id}/verify-email/confirm`, { code: guess === code ? "999999" : guess });
      }),
    );
    const codes = guesses.map((g) => g.body.code as string);
    expect(guesses.every((g) => g.status === 400)).toBe(true);
    expect(codes.filter((c) => c === "INVALID_VERIFICATION_CODE")).toHaveLength(5);
    expect(codes.filter((c) => c === "VERIFICATION_ATTEMPTS_EXCEEDED")).toHaveLength(7);
    const right = await p.call("POST", `/customers/${customer.body.id}/verify-email/confirm`, { code });
    expect(right.body.code).toBe("VERIFICATION_ATTEMPTS_EXCEEDED");
    // Resending cannot buy guesses: no new code while the exhausted one lives (429, Retry-After).
    const early = await p.call("POST", `/customers/${customer.body.id}/verify-email`);
    expect(early.status, JSON.stringify(early.body)).toBe(429);
    expect(early.body.code).toBe("RATE_LIMITED");
    expect(Number(early.headers.get("retry-after"))).toBeGreaterThan(0);
    // Once it expired (the platform's sandbox clock), a new send: the sandbox magic code (Grid's 123456) confirms.
    await advanceClock(p, 301);
    expect((await p.call("POST", `/customers/${customer.body.id}/verify-email`)).status).toBe(204);
    const magic = await p.call("POST", `/customers/${customer.body.id}/verify-email/confirm`, { code: "123456" });
    expect(magic.status, JSON.stringify(magic.body)).toBe(200);
    expect(magic.body.contactVerification.email).toBe("VERIFIED");
  });
});

describe.skipIf(Boolean(skipReason()))("session refresh and delegated keys", () => {
  it("refreshes a session by a retry signed with its own key: compressed key = client-held (no sealed key), uncompressed = sealed; the new session signs", async () => {
    const p = await sys.createPlatform({ environment: "PRODUCTION" });
    const accountId = await walletAccount(p);
    const { sessionId, key } = await productionSession(p, accountId);

    const clientSecret = p256.utils.randomSecretKey();
    const clientPublicKey = Buffer.from(p256.getPublicKey(clientSecret, true)).toString("hex");
    const first = await p.call("POST", `/auth/sessions/${sessionId}/refresh`, { clientPublicKey });
    expect(first.status, JSON.stringify(first.body)).toBe(202);
    const otherKey = p256.utils.randomSecretKey();
    const wrong = await p.call("POST", `/auth/sessions/${sessionId}/refresh`, { clientPublicKey }, signedBy(otherKey, first.body));
    expect(wrong.status).toBe(401);
    const swapped = await p.call("POST", `/auth/sessions/${sessionId}/refresh`, { clientPublicKey: Buffer.from(p256.getPublicKey(otherKey, true)).toString("hex") }, signedBy(key, first.body));
    expect(swapped.status).toBe(401);
    const refreshed = await p.call("POST", `/auth/sessions/${sessionId}/refresh`, { clientPublicKey }, signedBy(key, first.body));
    expect(refreshed.status, JSON.stringify(refreshed.body)).toBe(201);
    expect(refreshed.body.id).not.toBe(sessionId);
    expect(refreshed.body.accountId).toBe(accountId);
    expect(refreshed.body.encryptedSessionSigningKey).toBeUndefined();
    const replay = await p.call("POST", `/auth/sessions/${sessionId}/refresh`, { clientPublicKey }, signedBy(key, first.body));
    expect(replay.status).toBe(401);

    // The client-held key now signs: it refreshes its own session, this time into a sealed key.
    const sealedClient = newClientKeyPair();
    const second = await p.call("POST", `/auth/sessions/${refreshed.body.id}/refresh`, { clientPublicKey: sealedClient.clientPublicKey });
    expect(second.status, JSON.stringify(second.body)).toBe(202);
    const sealed = await p.call("POST", `/auth/sessions/${refreshed.body.id}/refresh`, { clientPublicKey: sealedClient.clientPublicKey }, signedBy(clientSecret, second.body));
    expect(sealed.status, JSON.stringify(sealed.body)).toBe(201);
    const newKey = await openSealed(sealed.body.encryptedSessionSigningKey, sealedClient);
    expect(newKey).toHaveLength(32);

    // A revoked session cannot be refreshed.
    const revoke = await p.call("DELETE", `/auth/sessions/${sessionId}`);
    expect((await p.call("DELETE", `/auth/sessions/${sessionId}`, undefined, signedBy(key, revoke.body))).status).toBe(204);
    const dead = await p.call("POST", `/auth/sessions/${sessionId}/refresh`, { clientPublicKey });
    expect(dead.status).toBe(401);
    expect(dead.body.code).toBe("SESSION_NOT_ACTIVE");
    expect((await p.call("POST", `/auth/sessions/Session:00000000-0000-7000-8000-000000000000/refresh`, { clientPublicKey })).status).toBe(404);
  });
  // Delegated keys are made for a card funding source since cards: grid-cards.test.ts.
});
