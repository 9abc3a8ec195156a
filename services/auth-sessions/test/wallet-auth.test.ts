import { randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { createRouterTransport } from "@connectrpc/connect";
import { appErrorInterceptor, errors } from "@corridor/kit";
import { Environment } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import { InternalAccountSchema } from "@corridor/proto/corridor/ledger/v1/accounts_pb.js";
import { LedgerService } from "@corridor/proto/corridor/ledger/v1/ledger_service_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SoftwareAuthenticator, localIssuer, newClientKeyPair, openSealed, stamp, unsignedJwt, type LocalIssuer } from "../../../test/support/wallet-client.js";
import { ledgerAccounts } from "../src/clients/ledger-accounts.js";
import { expectPublicError, startHarness, type Harness } from "./harness.js";

// A fake ledger: the accounts this file registered, by id.
const accounts = new Map<string, { platformId: string; type: string }>();
const ledgerTransport = createRouterTransport(
  (router) =>
    router.service(LedgerService, {
      async getInternalAccount(req: { platformId: string; accountId: string }) {
        const a = accounts.get(req.accountId);
        if (!a || a.platformId !== req.platformId) throw errors.notFound("InternalAccount", req.accountId);
        return { account: create(InternalAccountSchema, { id: req.accountId, platformId: a.platformId, type: a.type }) };
      },
    } as never),
  { router: { interceptors: [appErrorInterceptor] } },
);

const mail: { to: string; code: string }[] = [];
/** Whether the fake mail server reaches production users (false: as if CORRIDOR_SMTP_URL were unset). */
let delivering = true;
const lastCode = (to: string) => [...mail].reverse().find((m) => m.to === to)!.code;

let h: Harness;
let issuer: LocalIssuer;
const RP = { rpId: "wallet.example", origin: "https://wallet.example" };

beforeAll(async () => {
  issuer = await localIssuer("https://issuer.example", "corridor-tests", () => h.clock.now());
  h = await startHarness({
    accounts: ledgerAccounts(ledgerTransport),
    mailer: {
      deliversTo: (environment) => delivering || environment === "SANDBOX",
      async sendOtp(to, code) {
        mail.push({ to, code });
      },
      async sendContactCode(to, code) {
        mail.push({ to, code });
        return true;
      },
    },
    env: {
      CORRIDOR_OIDC_ISSUERS: JSON.stringify([{ issuer: issuer.issuer, audience: issuer.audience, jwks: issuer.jwks }]),
      CORRIDOR_PASSKEY_RP_ID: RP.rpId,
      CORRIDOR_PASSKEY_ORIGINS: RP.origin,
      CORRIDOR_WALLET_ENCRYPTION_KEY: "11".repeat(32),
    },
  });
});
afterAll(async () => {
  await h?.close();
});

async function walletAccount(env: Environment) {
  const p = await h.newPlatform({ environment: env });
  const accountId = `InternalAccount:${randomUUID()}`;
  accounts.set(accountId, { platformId: p.platformId, type: "EMBEDDED_WALLET" });
  return { platformId: p.platformId, accountId };
}

/** EMAIL_OTP credential + verified session; answers the session secret key. */
async function emailSession(platformId: string, accountId: string, email: string, sandbox: boolean) {
  const created = await h.wallet.createCredential({ platformId, accountId, type: "EMAIL_OTP", email });
  expect(created.result.case).toBe("authMethod");
  const credentialId = (created.result.value as { id: string }).id;
  return { credentialId, ...(await otpLogin(platformId, credentialId, email, sandbox)) };
}

async function otpLogin(platformId: string, credentialId: string, email: string, sandbox: boolean) {
  const client = newClientKeyPair();
  const otp = sandbox ? "000000" : lastCode(email);
  const { session } = await h.wallet.verifyCredential({ platformId, credentialId, type: "EMAIL_OTP", otp, clientPublicKey: client.clientPublicKey });
  const secretKey = await openSealed(session!.encryptedSessionSigningKey, client);
  return { session: session!, secretKey };
}

describe("EMAIL_OTP on a production platform", () => {
  it("creates the first credential at once, mails a 6-digit code and verifies it into a 15-minute session whose key the client opens", async () => {
    const { platformId, accountId } = await walletAccount(Environment.PRODUCTION);
    const { session, secretKey } = await emailSession(platformId, accountId, "a@example.com", false);
    expect(lastCode("a@example.com")).toMatch(/^\d{6}$/);
    expect(secretKey).toHaveLength(32);
    expect(session.expiresAt!.seconds - session.createdAt!.seconds).toBe(900n);
    expect(session.id).toMatch(/^Session:/);
    const listed = await h.wallet.listSessions({ platformId, accountId });
    expect(listed.sessions.map((s) => s.id)).toEqual([session.id]);
  });

  it("refuses a re-challenge with 501 EMAIL_DELIVERY_NOT_CONFIGURED once there is no mail server, drawing no code (the last one still works)", async () => {
    const { platformId, accountId } = await walletAccount(Environment.PRODUCTION);
    const created = await h.wallet.createCredential({ platformId, accountId, type: "EMAIL_OTP", email: "nomail@example.com" });
    const credentialId = (created.result.value as { id: string }).id;
    const mailed = mail.length;
    delivering = false;
    try {
      await expectPublicError(h.wallet.challengeCredential({ platformId, credentialId }), "INVALID", "EMAIL_DELIVERY_NOT_CONFIGURED");
      const other = await walletAccount(Environment.PRODUCTION);
      await expectPublicError(h.wallet.createCredential({ ...other, type: "EMAIL_OTP", email: "nomail2@example.com" }), "INVALID", "EMAIL_DELIVERY_NOT_CONFIGURED");
    } finally {
      delivering = true;
    }
    expect(mail.length).toBe(mailed);
    await otpLogin(platformId, credentialId, "nomail@example.com", false);
    // Nor was the 30-second re-challenge window used up by the refusal.
    await h.wallet.challengeCredential({ platformId, credentialId });
  });

  it("counts wrong codes: 401 Invalid OTP code, and after 5 wrong tries even the right code fails", async () => {
    const { platformId, accountId } = await walletAccount(Environment.PRODUCTION);
    const created = await h.wallet.createCredential({ platformId, accountId, type: "EMAIL_OTP", email: "b@example.com" });
    const credentialId = (created.result.value as { id: string }).id;
    const right = lastCode("b@example.com");
    const wrong = right === "123456" ? "654321" : "123456";
    const clientPublicKey = newClientKeyPair().clientPublicKey;
    for (let i = 0; i < 5; i++) {
      const err = await expectPublicError(h.wallet.verifyCredential({ platformId, credentialId, type: "EMAIL_OTP", otp: wrong, clientPublicKey }), "UNAUTHENTICATED", "UNAUTHORIZED");
      expect(err.details?.reason).toBe("Invalid OTP code");
    }
    await expectPublicError(h.wallet.verifyCredential({ platformId, credentialId, type: "EMAIL_OTP", otp: right, clientPublicKey }), "UNAUTHENTICATED", "UNAUTHORIZED");
  });

  it("rejects an expired code (5 minutes) and the sandbox magic code", async () => {
    const { platformId, accountId } = await walletAccount(Environment.PRODUCTION);
    const created = await h.wallet.createCredential({ platformId, accountId, type: "EMAIL_OTP", email: "c@example.com" });
    const credentialId = (created.result.value as { id: string }).id;
    const clientPublicKey = newClientKeyPair().clientPublicKey;
    await expectPublicError(h.wallet.verifyCredential({ platformId, credentialId, type: "EMAIL_OTP", otp: "000000", clientPublicKey }), "UNAUTHENTICATED", "UNAUTHORIZED");
    h.clock.advance(5 * 60_000);
    const expired = await expectPublicError(h.wallet.verifyCredential({ platformId, credentialId, type: "EMAIL_OTP", otp: lastCode("c@example.com"), clientPublicKey }), "UNAUTHENTICATED", "UNAUTHORIZED");
    expect(expired.details?.reason).toBe("Invalid OTP code");
    expect(expired.message).toContain("expired");
  });

  it("rate-limits challenge re-issues to one per 30 s with RATE_LIMITED and retryAfterSeconds", async () => {
    const { platformId, accountId } = await walletAccount(Environment.PRODUCTION);
    const created = await h.wallet.createCredential({ platformId, accountId, type: "EMAIL_OTP", email: "d@example.com" });
    const credentialId = (created.result.value as { id: string }).id;
    await h.wallet.challengeCredential({ platformId, credentialId });
    h.clock.advance(10_000);
    const err = await expectPublicError(h.wallet.challengeCredential({ platformId, credentialId }), "RATE_LIMITED", "RATE_LIMITED");
    expect(err.details?.retryAfterSeconds).toBe(20);
    h.clock.advance(20_000);
    const again = await h.wallet.challengeCredential({ platformId, credentialId });
    expect(again.result.case).toBe("authMethod");
  });
});

describe("signed retries", () => {
  it("adds a second credential only with a stamp by an active session over payloadToSign; the requestId is single use", async () => {
    const { platformId, accountId } = await walletAccount(Environment.PRODUCTION);
    const { secretKey } = await emailSession(platformId, accountId, "e@example.com", false);
    const token = await issuer.mint({ sub: "user-e", email: "e@example.com" });
    const req = { platformId, accountId, type: "OAUTH", oidcToken: token };
    const first = await h.wallet.createCredential(req);
    expect(first.result.case).toBe("challenge");
    const ch = first.result.value as { payloadToSign: string; requestId: string };
    expect(JSON.parse(ch.payloadToSign)).toMatchObject({ requestId: ch.requestId, accountId, operation: "ADD_CREDENTIAL" });

    // Wrong signer, then a changed body, then the right one; then reuse.
    const bad = await expectPublicError(h.wallet.createCredential({ ...req, signedRetry: { requestId: ch.requestId, signature: stamp(ch.payloadToSign, newClientKeyPair().secretKey) } }), "UNAUTHENTICATED", "UNAUTHORIZED");
    expect(bad.details?.reason).toBe("Invalid Service-Wallet-Signature");
    await expectPublicError(h.wallet.createCredential({ ...req, signedRetry: { requestId: ch.requestId, signature: "sandbox-valid-signature" } }), "UNAUTHENTICATED", "UNAUTHORIZED");
    const other = await issuer.mint({ sub: "user-x" });
    await expectPublicError(h.wallet.createCredential({ ...req, oidcToken: other, signedRetry: { requestId: ch.requestId, signature: stamp(ch.payloadToSign, secretKey) } }), "UNAUTHENTICATED", "WALLET_SIGNATURE_BODY_MISMATCH");
    const done = await h.wallet.createCredential({ ...req, signedRetry: { requestId: ch.requestId, signature: stamp(ch.payloadToSign, secretKey) } });
    expect(done.result.case).toBe("authMethod");
    expect(done.result.value).toMatchObject({ type: "OAUTH", nickname: "e@example.com" });
    // The same identity again is a duplicate, whatever is signed.
    await expectPublicError(h.wallet.createCredential({ ...req, signedRetry: { requestId: ch.requestId, signature: stamp(ch.payloadToSign, secretKey) } }), "INVALID", "OAUTH_CREDENTIAL_ALREADY_EXISTS");
  });

  it("refuses a retry after expiresAt and a stamp by an expired or revoked session", async () => {
    const { platformId, accountId } = await walletAccount(Environment.PRODUCTION);
    const { secretKey, session } = await emailSession(platformId, accountId, "f@example.com", false);
    const client = newClientKeyPair();
    const first = await h.wallet.exportWallet({ platformId, accountId, clientPublicKey: client.clientPublicKey });
    const ch = first.result.value as { payloadToSign: string; requestId: string };
    h.clock.advance(5 * 60_000);
    const expired = await expectPublicError(
      h.wallet.exportWallet({ platformId, accountId, clientPublicKey: client.clientPublicKey, signedRetry: { requestId: ch.requestId, signature: stamp(ch.payloadToSign, secretKey) } }),
      "UNAUTHENTICATED",
      "UNAUTHORIZED",
    );
    expect(expired.details?.reason).toBe("Signed-retry challenge expired");

    // Revoke the session (signed by itself), then it cannot sign anything.
    const r1 = await h.wallet.revokeSession({ platformId, sessionId: session.id });
    const rc = r1.challenge!;
    expect((await h.wallet.revokeSession({ platformId, sessionId: session.id, signedRetry: { requestId: rc.requestId, signature: stamp(rc.payloadToSign, secretKey) } })).challenge).toBeUndefined();
    const next = await h.wallet.exportWallet({ platformId, accountId, clientPublicKey: client.clientPublicKey });
    const nc = next.result.value as { payloadToSign: string; requestId: string };
    await expectPublicError(
      h.wallet.exportWallet({ platformId, accountId, clientPublicKey: client.clientPublicKey, signedRetry: { requestId: nc.requestId, signature: stamp(nc.payloadToSign, secretKey) } }),
      "UNAUTHENTICATED",
      "UNAUTHORIZED",
    );
    expect((await h.wallet.listSessions({ platformId, accountId })).sessions).toEqual([]);
  });

  it("exports the same wallet key every time, sealed to the given client key", async () => {
    const { platformId, accountId } = await walletAccount(Environment.PRODUCTION);
    const { secretKey } = await emailSession(platformId, accountId, "g@example.com", false);
    const keys: Uint8Array[] = [];
    for (let i = 0; i < 2; i++) {
      const client = newClientKeyPair();
      const first = await h.wallet.exportWallet({ platformId, accountId, clientPublicKey: client.clientPublicKey });
      const ch = first.result.value as { payloadToSign: string; requestId: string };
      const res = await h.wallet.exportWallet({ platformId, accountId, clientPublicKey: client.clientPublicKey, signedRetry: { requestId: ch.requestId, signature: stamp(ch.payloadToSign, secretKey) } });
      expect(res.result.case).toBe("export");
      keys.push(await openSealed((res.result.value as { encryptedWalletCredentials: string }).encryptedWalletCredentials, client));
      const reused = await expectPublicError(
        h.wallet.exportWallet({ platformId, accountId, clientPublicKey: client.clientPublicKey, signedRetry: { requestId: ch.requestId, signature: stamp(ch.payloadToSign, secretKey) } }),
        "UNAUTHENTICATED",
        "UNAUTHORIZED",
      );
      expect(reused.details?.reason).toBe("Request-Id already used");
    }
    expect(keys[0]).toHaveLength(32);
    expect(Buffer.from(keys[0]!)).toEqual(Buffer.from(keys[1]!));
  });

  it("revokes a credential only with a session of another credential, never the last one", async () => {
    const { platformId, accountId } = await walletAccount(Environment.SANDBOX);
    const email = await emailSession(platformId, accountId, "h@example.com", true);
    await expectPublicError(h.wallet.revokeCredential({ platformId, credentialId: email.credentialId }), "INVALID", "LAST_CREDENTIAL");
    const token = unsignedJwt({ iss: "https://oidc.sandbox.corridor.local", sub: "sandbox-user", email: "h2@example.com", iat: Math.floor(h.clock.now().getTime() / 1000) });
    const first = await h.wallet.createCredential({ platformId, accountId, type: "OAUTH", oidcToken: token });
    const ch = first.result.value as { requestId: string };
    const oauth = await h.wallet.createCredential({ platformId, accountId, type: "OAUTH", oidcToken: token, signedRetry: { requestId: ch.requestId, signature: "sandbox-valid-signature" } });
    const oauthId = (oauth.result.value as { id: string }).id;
    // The email credential's own session may not revoke it.
    const r = await h.wallet.revokeCredential({ platformId, credentialId: email.credentialId });
    const err = await expectPublicError(
      h.wallet.revokeCredential({ platformId, credentialId: email.credentialId, signedRetry: { requestId: r.challenge!.requestId, signature: stamp(r.challenge!.payloadToSign, email.secretKey) } }),
      "UNAUTHENTICATED",
      "UNAUTHORIZED",
    );
    expect(err.details?.reason).toBe("Invalid Service-Wallet-Signature");
    // A session of the OAUTH credential (sandbox magic token) may.
    const client = newClientKeyPair();
    const { session } = await h.wallet.verifyCredential({ platformId, credentialId: oauthId, type: "OAUTH", oidcToken: "sandbox-valid-oidc-token", clientPublicKey: client.clientPublicKey });
    const oauthKey = await openSealed(session!.encryptedSessionSigningKey, client);
    const done = await h.wallet.revokeCredential({ platformId, credentialId: email.credentialId, signedRetry: { requestId: r.challenge!.requestId, signature: stamp(r.challenge!.payloadToSign, oauthKey) } });
    expect(done.challenge).toBeUndefined();
    expect((await h.wallet.listCredentials({ platformId, accountId })).authMethods.map((m) => m.id)).toEqual([oauthId]);
  });

  it("serves other services: CreateSignedChallenge then VerifySignedRetry over their body", async () => {
    const { platformId, accountId } = await walletAccount(Environment.PRODUCTION);
    const { secretKey, session } = await emailSession(platformId, accountId, "q@example.com", false);
    const body = new TextEncoder().encode('{"quoteId":"Quote:1"}');
    const { challenge } = await h.wallet.createSignedChallenge({ platformId, accountId, operation: "EXECUTE_QUOTE", body });
    const ok = await h.wallet.verifySignedRetry({ platformId, accountId, operation: "EXECUTE_QUOTE", body, signedRetry: { requestId: challenge!.requestId, signature: stamp(challenge!.payloadToSign, secretKey) } });
    expect(ok.sessionId).toBe(session.id);
  });
});

describe("OAUTH and PASSKEY with real cryptography (production)", () => {
  it("OAUTH: checks signature, audience and iat age on create and verify", async () => {
    const { platformId, accountId } = await walletAccount(Environment.PRODUCTION);
    const stale = await issuer.mint({ sub: "u1", iatOffsetSeconds: -61 });
    expect((await expectPublicError(h.wallet.createCredential({ platformId, accountId, type: "OAUTH", oidcToken: stale }), "UNAUTHENTICATED", "UNAUTHORIZED")).details?.reason).toBe("Invalid OIDC token");
    await expectPublicError(h.wallet.createCredential({ platformId, accountId, type: "OAUTH", oidcToken: await issuer.mint({ sub: "u1", audience: "other" }) }), "UNAUTHENTICATED", "UNAUTHORIZED");
    await expectPublicError(h.wallet.createCredential({ platformId, accountId, type: "OAUTH", oidcToken: unsignedJwt({ iss: issuer.issuer, sub: "u1", aud: issuer.audience, iat: 1 }) }), "UNAUTHENTICATED", "UNAUTHORIZED");
    const created = await h.wallet.createCredential({ platformId, accountId, type: "OAUTH", oidcToken: await issuer.mint({ sub: "u1" }) });
    const id = (created.result.value as { id: string; nickname: string }).id;
    const client = newClientKeyPair();
    await expectPublicError(h.wallet.verifyCredential({ platformId, credentialId: id, type: "OAUTH", oidcToken: await issuer.mint({ sub: "u2" }), clientPublicKey: client.clientPublicKey }), "UNAUTHENTICATED", "UNAUTHORIZED");
    await expectPublicError(h.wallet.verifyCredential({ platformId, credentialId: id, type: "OAUTH", oidcToken: "sandbox-valid-oidc-token", clientPublicKey: client.clientPublicKey }), "UNAUTHENTICATED", "UNAUTHORIZED");
    const { session } = await h.wallet.verifyCredential({ platformId, credentialId: id, type: "OAUTH", oidcToken: await issuer.mint({ sub: "u1" }), clientPublicKey: client.clientPublicKey });
    expect(await openSealed(session!.encryptedSessionSigningKey, client)).toHaveLength(32);
  });

  it("PASSKEY: registers with an attestation, verifies an assertion on the issued challenge, and rejects a wrong origin", async () => {
    const { platformId, accountId } = await walletAccount(Environment.PRODUCTION);
    const authenticator = new SoftwareAuthenticator(RP.rpId, RP.origin);
    const regChallenge = Buffer.from("integrator-registration-challenge").toString("base64url");
    const created = await h.wallet.createCredential({ platformId, accountId, type: "PASSKEY", nickname: "My phone", challenge: regChallenge, attestation: authenticator.register(regChallenge) });
    const id = (created.result.value as { id: string }).id;
    expect(created.result.value).toMatchObject({ type: "PASSKEY", nickname: "My phone" });
    await expectPublicError(h.wallet.challengeCredential({ platformId, credentialId: id }), "INVALID", "INVALID_INPUT");
    const client = newClientKeyPair();
    const ch = await h.wallet.challengeCredential({ platformId, credentialId: id, clientPublicKey: client.clientPublicKey });
    const pc = ch.result.value as { challenge: string; requestId: string };
    const wrongOrigin = await expectPublicError(
      h.wallet.verifyCredential({ platformId, credentialId: id, type: "PASSKEY", assertion: authenticator.assert(pc.challenge, { origin: "https://evil.example" }), requestId: pc.requestId }),
      "UNAUTHENTICATED",
      "UNAUTHORIZED",
    );
    expect(wrongOrigin.details?.reason).toBe("Invalid passkey signature");
    const { session } = await h.wallet.verifyCredential({ platformId, credentialId: id, type: "PASSKEY", assertion: authenticator.assert(pc.challenge), requestId: pc.requestId });
    expect(await openSealed(session!.encryptedSessionSigningKey, client)).toHaveLength(32);
    await expectPublicError(h.wallet.verifyCredential({ platformId, credentialId: id, type: "PASSKEY", assertion: authenticator.assert(pc.challenge), requestId: pc.requestId }), "UNAUTHENTICATED", "UNAUTHORIZED");
  });

  it("at most one EMAIL_OTP and one PASSKEY per account", async () => {
    const { platformId, accountId } = await walletAccount(Environment.SANDBOX);
    await h.wallet.createCredential({ platformId, accountId, type: "EMAIL_OTP", email: "one@example.com" });
    await expectPublicError(h.wallet.createCredential({ platformId, accountId, type: "EMAIL_OTP", email: "two@example.com" }), "INVALID", "EMAIL_OTP_CREDENTIAL_ALREADY_EXISTS");
    const register = (nickname: string) => {
      const challenge = Buffer.from(`registration-${nickname}`).toString("base64url");
      return { platformId, accountId, type: "PASSKEY", nickname, challenge, attestation: new SoftwareAuthenticator(RP.rpId, RP.origin).register(challenge) };
    };
    // The first passkey is a second credential: added by signed retry (sandbox magic signature).
    const laptop = register("Laptop");
    const first = await h.wallet.createCredential(laptop);
    const ch = first.result.value as { requestId: string };
    const added = await h.wallet.createCredential({ ...laptop, signedRetry: { requestId: ch.requestId, signature: "sandbox-valid-signature" } });
    expect(added.result.case).toBe("authMethod");
    await expectPublicError(h.wallet.createCredential(register("Phone")), "INVALID", "PASSKEY_CREDENTIAL_ALREADY_EXISTS");
  });

  it("answers 404 for an unknown or foreign account and 400 for a non-wallet account", async () => {
    const { platformId } = await walletAccount(Environment.SANDBOX);
    const other = await walletAccount(Environment.SANDBOX);
    await expectPublicError(h.wallet.listCredentials({ platformId, accountId: other.accountId }), "NOT_FOUND", "INTERNAL_ACCOUNT_NOT_FOUND");
    const fiat = `InternalAccount:${randomUUID()}`;
    accounts.set(fiat, { platformId, type: "INTERNAL_FIAT" });
    await expectPublicError(h.wallet.listCredentials({ platformId, accountId: fiat }), "INVALID", "INVALID_INPUT");
  });
});

describe("wallet keys without an operator-configured encryption key", () => {
  it("refuses wallet export on a production platform with 503, and still serves a sandbox one", async () => {
    const bare = await startHarness({ accounts: ledgerAccounts(ledgerTransport), env: {} });
    try {
      const client = newClientKeyPair();
      for (const [environment, sandbox] of [[Environment.PRODUCTION, false], [Environment.SANDBOX, true]] as const) {
        const p = await bare.newPlatform({ environment });
        const accountId = `InternalAccount:${randomUUID()}`;
        accounts.set(accountId, { platformId: p.platformId, type: "EMBEDDED_WALLET" });
        const call = bare.wallet.exportWallet({ platformId: p.platformId, accountId, clientPublicKey: client.clientPublicKey });
        if (sandbox) expect((await call).result.case).toBe("challenge");
        else await expectPublicError(call, "UNAVAILABLE", "WALLET_ENCRYPTION_NOT_CONFIGURED");
      }
    } finally {
      await bare.close();
    }
  });
});

describe("expiry (ManualClock)", () => {
  type Challenge = { payloadToSign: string; requestId: string; expiresAt?: Timestamp };

  it("a session lasts 15 minutes: listed and signing until 1 ms before expiresAt, gone and its stamp 401 Invalid Service-Wallet-Signature from expiresAt", async () => {
    const { platformId, accountId } = await walletAccount(Environment.PRODUCTION);
    const { session, secretKey } = await emailSession(platformId, accountId, "expiry-session@example.com", false);
    const client = newClientKeyPair();
    const exportSigned = async () => {
      const first = await h.wallet.exportWallet({ platformId, accountId, clientPublicKey: client.clientPublicKey });
      const ch = first.result.value as Challenge;
      return h.wallet.exportWallet({ platformId, accountId, clientPublicKey: client.clientPublicKey, signedRetry: { requestId: ch.requestId, signature: stamp(ch.payloadToSign, secretKey) } });
    };
    h.clock.advance(15 * 60_000 - 1);
    expect((await exportSigned()).result.case).toBe("export");
    expect((await h.wallet.listSessions({ platformId, accountId })).sessions.map((s) => s.id)).toEqual([session.id]);
    h.clock.advance(1);
    const err = await expectPublicError(exportSigned(), "UNAUTHENTICATED", "UNAUTHORIZED");
    expect(err.details?.reason).toBe("Invalid Service-Wallet-Signature");
    expect((await h.wallet.listSessions({ platformId, accountId })).sessions).toEqual([]);
  });

  it("a signed-retry challenge expires 5 minutes after it was issued: accepted 1 ms before (refused at expiresAt: see 'refuses a retry after expiresAt')", async () => {
    const { platformId, accountId } = await walletAccount(Environment.PRODUCTION);
    const { secretKey } = await emailSession(platformId, accountId, "expiry-retry@example.com", false);
    const client = newClientKeyPair();
    const issuedAt = h.clock.now().getTime();
    const first = await h.wallet.exportWallet({ platformId, accountId, clientPublicKey: client.clientPublicKey });
    const ch = first.result.value as Challenge;
    expect(timestampDate(ch.expiresAt!).getTime()).toBe(issuedAt + 5 * 60_000);
    expect(JSON.parse(ch.payloadToSign).expiresAt).toBe(new Date(issuedAt + 5 * 60_000).toISOString());
    h.clock.advance(5 * 60_000 - 1);
    const res = await h.wallet.exportWallet({ platformId, accountId, clientPublicKey: client.clientPublicKey, signedRetry: { requestId: ch.requestId, signature: stamp(ch.payloadToSign, secretKey) } });
    expect(res.result.case).toBe("export");
  });

  it("an OTP code is good for 5 minutes: verified 1 ms before they end (refused at the end: see 'rejects an expired code')", async () => {
    const { platformId, accountId } = await walletAccount(Environment.PRODUCTION);
    const created = await h.wallet.createCredential({ platformId, accountId, type: "EMAIL_OTP", email: "expiry-otp@example.com" });
    const credentialId = (created.result.value as { id: string }).id;
    h.clock.advance(5 * 60_000 - 1);
    const client = newClientKeyPair();
    const { session } = await h.wallet.verifyCredential({ platformId, credentialId, type: "EMAIL_OTP", otp: lastCode("expiry-otp@example.com"), clientPublicKey: client.clientPublicKey });
    expect(await openSealed(session!.encryptedSessionSigningKey, client)).toHaveLength(32);
  });

  it("a passkey challenge is good for 5 minutes: refused from expiresAt with 401 Passkey challenge expired, verified 1 ms before", async () => {
    const { platformId, accountId } = await walletAccount(Environment.PRODUCTION);
    const authenticator = new SoftwareAuthenticator(RP.rpId, RP.origin);
    const regChallenge = Buffer.from("registration-expiry").toString("base64url");
    const created = await h.wallet.createCredential({ platformId, accountId, type: "PASSKEY", nickname: "Expiry", challenge: regChallenge, attestation: authenticator.register(regChallenge) });
    const credentialId = (created.result.value as { id: string }).id;
    const client = newClientKeyPair();

    const issuedAt = h.clock.now().getTime();
    const late = (await h.wallet.challengeCredential({ platformId, credentialId, clientPublicKey: client.clientPublicKey })).result.value as { challenge: string; requestId: string; expiresAt?: Timestamp };
    expect(timestampDate(late.expiresAt!).getTime()).toBe(issuedAt + 5 * 60_000);
    h.clock.advance(5 * 60_000);
    const err = await expectPublicError(
      h.wallet.verifyCredential({ platformId, credentialId, type: "PASSKEY", assertion: authenticator.assert(late.challenge), requestId: late.requestId }),
      "UNAUTHENTICATED",
      "UNAUTHORIZED",
    );
    expect(err.details?.reason).toBe("Passkey challenge expired");

    const inTime = (await h.wallet.challengeCredential({ platformId, credentialId, clientPublicKey: client.clientPublicKey })).result.value as { challenge: string; requestId: string };
    h.clock.advance(5 * 60_000 - 1);
    const { session } = await h.wallet.verifyCredential({ platformId, credentialId, type: "PASSKEY", assertion: authenticator.assert(inTime.challenge), requestId: inTime.requestId });
    expect(await openSealed(session!.encryptedSessionSigningKey, client)).toHaveLength(32);
  });
});

describe("a presented Request-Id is checked before the target: replays answer 401 whatever became of the target", () => {
  type Challenge = { payloadToSign: string; requestId: string };
  const reasonOf = async (call: Promise<unknown>) => (await expectPublicError(call, "UNAUTHENTICATED", "UNAUTHORIZED")).details?.reason;

  /** A production account with an EMAIL_OTP session and a second (OAUTH) credential added by signed retry. */
  async function twoCredentials(tag: string) {
    const { platformId, accountId } = await walletAccount(Environment.PRODUCTION);
    const email = await emailSession(platformId, accountId, `${tag}@example.com`, false);
    const req = { platformId, accountId, type: "OAUTH", oidcToken: await issuer.mint({ sub: `${tag}-oauth` }) };
    const ch = (await h.wallet.createCredential(req)).result.value as Challenge;
    const oauth = await h.wallet.createCredential({ ...req, signedRetry: { requestId: ch.requestId, signature: stamp(ch.payloadToSign, email.secretKey) } });
    return { platformId, accountId, email, oauthId: (oauth.result.value as { id: string }).id, signed: (c: Challenge) => ({ requestId: c.requestId, signature: stamp(c.payloadToSign, email.secretKey) }) };
  }

  it("add credential: the used requestId replayed for another identity", async () => {
    const { platformId, accountId } = await walletAccount(Environment.PRODUCTION);
    const { secretKey } = await emailSession(platformId, accountId, "replay-add@example.com", false);
    const req = { platformId, accountId, type: "OAUTH", oidcToken: await issuer.mint({ sub: "replay-add-1" }) };
    const ch = (await h.wallet.createCredential(req)).result.value as Challenge;
    const signedRetry = { requestId: ch.requestId, signature: stamp(ch.payloadToSign, secretKey) };
    expect((await h.wallet.createCredential({ ...req, signedRetry })).result.case).toBe("authMethod");
    expect(await reasonOf(h.wallet.createCredential({ ...req, oidcToken: await issuer.mint({ sub: "replay-add-2" }), signedRetry }))).toBe("Request-Id already used");
    expect((await h.wallet.listCredentials({ platformId, accountId })).authMethods).toHaveLength(2);
  });

  it("revoke credential: the replay on the revoked credential, and any Request-Id on an unknown one, is 401; an unknown id without Request-Id stays 404", async () => {
    const { platformId, accountId, email, oauthId, signed } = await twoCredentials("replay-revoke-credential");
    const ch = (await h.wallet.revokeCredential({ platformId, credentialId: oauthId })).challenge!;
    const signedRetry = signed(ch);
    expect((await h.wallet.revokeCredential({ platformId, credentialId: oauthId, signedRetry })).challenge).toBeUndefined();
    expect(await reasonOf(h.wallet.revokeCredential({ platformId, credentialId: oauthId, signedRetry }))).toBe("Request-Id already used");
    // Also ahead of LAST_CREDENTIAL: the email credential is now the last one.
    expect(await reasonOf(h.wallet.revokeCredential({ platformId, credentialId: email.credentialId, signedRetry }))).toBe("Request-Id already used");
    const unknown = "AuthMethod:0190f0a8-0000-7000-8000-000000000000";
    expect(await reasonOf(h.wallet.revokeCredential({ platformId, credentialId: unknown, signedRetry }))).toBe("Request-Id already used");
    expect(await reasonOf(h.wallet.revokeCredential({ platformId, credentialId: unknown, signedRetry: { requestId: `Request:${randomUUID()}`, signature: signedRetry.signature } }))).toBe("Unknown Request-Id");
    await expectPublicError(h.wallet.revokeCredential({ platformId, credentialId: unknown }), "NOT_FOUND", "AUTH_METHOD_NOT_FOUND");
    await expectPublicError(h.wallet.revokeCredential({ platformId, credentialId: oauthId }), "NOT_FOUND", "AUTH_METHOD_NOT_FOUND");
    expect((await h.wallet.listCredentials({ platformId, accountId })).authMethods.map((m) => m.id)).toEqual([email.credentialId]);
  });

  it("revoke credential: an expired Request-Id is 401 Signed-retry challenge expired even once its credential is gone", async () => {
    const { platformId, oauthId, signed } = await twoCredentials("replay-revoke-expired");
    const stale = (await h.wallet.revokeCredential({ platformId, credentialId: oauthId })).challenge!;
    h.clock.advance(5 * 60_000);
    const fresh = (await h.wallet.revokeCredential({ platformId, credentialId: oauthId })).challenge!;
    await h.wallet.revokeCredential({ platformId, credentialId: oauthId, signedRetry: signed(fresh) });
    expect(await reasonOf(h.wallet.revokeCredential({ platformId, credentialId: oauthId, signedRetry: signed(stale) }))).toBe("Signed-retry challenge expired");
  });

  it("revoke session: the replay on the revoked session, and a used Request-Id on an unknown one, is 401; an unknown id without Request-Id stays 404", async () => {
    const { platformId, accountId } = await walletAccount(Environment.PRODUCTION);
    const a = await emailSession(platformId, accountId, "replay-revoke-session@example.com", false);
    // A second session of the same credential: a fresh code (the first one was used).
    await h.wallet.challengeCredential({ platformId, credentialId: a.credentialId });
    const b = await otpLogin(platformId, a.credentialId, "replay-revoke-session@example.com", false);
    const ch = (await h.wallet.revokeSession({ platformId, sessionId: b.session.id })).challenge!;
    const signedRetry = { requestId: ch.requestId, signature: stamp(ch.payloadToSign, a.secretKey) };
    expect((await h.wallet.revokeSession({ platformId, sessionId: b.session.id, signedRetry })).challenge).toBeUndefined();
    expect(await reasonOf(h.wallet.revokeSession({ platformId, sessionId: b.session.id, signedRetry }))).toBe("Request-Id already used");
    const unknown = "Session:0190f0a8-0000-7000-8000-000000000000";
    expect(await reasonOf(h.wallet.revokeSession({ platformId, sessionId: unknown, signedRetry }))).toBe("Request-Id already used");
    await expectPublicError(h.wallet.revokeSession({ platformId, sessionId: unknown }), "NOT_FOUND", "SESSION_NOT_FOUND");
    await expectPublicError(h.wallet.revokeSession({ platformId, sessionId: b.session.id }), "NOT_FOUND", "SESSION_NOT_FOUND");
    expect((await h.wallet.listSessions({ platformId, accountId })).sessions.map((s) => s.id)).toEqual([a.session.id]);
  });

  it("export and VerifySignedRetry: the replay is 401 Request-Id already used", async () => {
    const { platformId, accountId } = await walletAccount(Environment.PRODUCTION);
    const { secretKey } = await emailSession(platformId, accountId, "replay-export@example.com", false);
    const client = newClientKeyPair();
    const ex = (await h.wallet.exportWallet({ platformId, accountId, clientPublicKey: client.clientPublicKey })).result.value as Challenge;
    const signedRetry = { requestId: ex.requestId, signature: stamp(ex.payloadToSign, secretKey) };
    expect((await h.wallet.exportWallet({ platformId, accountId, clientPublicKey: client.clientPublicKey, signedRetry })).result.case).toBe("export");
    expect(await reasonOf(h.wallet.exportWallet({ platformId, accountId, clientPublicKey: client.clientPublicKey, signedRetry }))).toBe("Request-Id already used");

    const body = new TextEncoder().encode('{"quoteId":"Quote:replay"}');
    const { challenge } = await h.wallet.createSignedChallenge({ platformId, accountId, operation: "EXECUTE_QUOTE", body });
    const retry = { requestId: challenge!.requestId, signature: stamp(challenge!.payloadToSign, secretKey) };
    await h.wallet.verifySignedRetry({ platformId, accountId, operation: "EXECUTE_QUOTE", body, signedRetry: retry });
    expect(await reasonOf(h.wallet.verifySignedRetry({ platformId, accountId, operation: "EXECUTE_QUOTE", body, signedRetry: retry }))).toBe("Request-Id already used");
  });
});

describe("per-platform passkey relying party (production)", () => {
  const A = { rpId: "pay.acme.example", origin: "https://pay.acme.example" };
  const B = { rpId: "wallet.other.example", origin: "https://wallet.other.example" };

  async function platformWithRp(rp: { rpId: string; origin: string }) {
    const account = await walletAccount(Environment.PRODUCTION);
    await h.auth.updatePlatformConfig({ platformId: account.platformId, passkeyRelyingPartyId: rp.rpId, passkeyOrigins: { origins: [rp.origin] } });
    return account;
  }

  const register = (platformId: string, accountId: string, authenticator: SoftwareAuthenticator) => {
    const challenge = Buffer.from(`registration-${randomUUID()}`).toString("base64url");
    return h.wallet.createCredential({ platformId, accountId, type: "PASSKEY", nickname: "Phone", challenge, attestation: authenticator.register(challenge) });
  };

  it("registers and verifies against the platform's own RP id and origin; refuses an assertion made for another platform's origin or RP id", async () => {
    const { platformId, accountId } = await platformWithRp(A);
    await platformWithRp(B);
    const authenticator = new SoftwareAuthenticator(A.rpId, A.origin);
    const created = await register(platformId, accountId, authenticator);
    expect(created.result.case).toBe("authMethod");
    const id = (created.result.value as { id: string }).id;
    const client = newClientKeyPair();
    const challenge = async () => {
      h.clock.advance(30_000); // one challenge per credential per 30 s
      return (await h.wallet.challengeCredential({ platformId, credentialId: id, clientPublicKey: client.clientPublicKey })).result.value as { challenge: string; requestId: string };
    };

    // B's origin in clientDataJSON.
    const c1 = await challenge();
    const wrongOrigin = await expectPublicError(h.wallet.verifyCredential({ platformId, credentialId: id, type: "PASSKEY", assertion: authenticator.assert(c1.challenge, { origin: B.origin }), requestId: c1.requestId }), "UNAUTHENTICATED", "UNAUTHORIZED");
    expect(wrongOrigin.details?.reason).toBe("Invalid passkey signature");
    // The same key asserting for B's RP id (authenticatorData's rpIdHash), from B's origin.
    const asB = Object.create(authenticator, { rpId: { value: B.rpId } }) as SoftwareAuthenticator;
    const wrongRp = await expectPublicError(h.wallet.verifyCredential({ platformId, credentialId: id, type: "PASSKEY", assertion: asB.assert(c1.challenge, { origin: B.origin }), requestId: c1.requestId }), "UNAUTHENTICATED", "UNAUTHORIZED");
    expect(wrongRp.details?.reason).toBe("Invalid passkey signature");
    // The deployment's default relying party does not apply to this platform either.
    const asDefault = Object.create(authenticator, { rpId: { value: RP.rpId } }) as SoftwareAuthenticator;
    await expectPublicError(h.wallet.verifyCredential({ platformId, credentialId: id, type: "PASSKEY", assertion: asDefault.assert(c1.challenge, { origin: RP.origin }), requestId: c1.requestId }), "UNAUTHENTICATED", "UNAUTHORIZED");

    const { session } = await h.wallet.verifyCredential({ platformId, credentialId: id, type: "PASSKEY", assertion: authenticator.assert(c1.challenge), requestId: c1.requestId });
    expect(await openSealed(session!.encryptedSessionSigningKey, client)).toHaveLength(32);
  });

  it("refuses a registration made for another platform's RP, and a platform on the default RP refuses one made for a platform's own RP", async () => {
    const a = await platformWithRp(A);
    const fromB = await expectPublicError(register(a.platformId, a.accountId, new SoftwareAuthenticator(B.rpId, B.origin)), "UNAUTHENTICATED", "UNAUTHORIZED");
    expect(fromB.details?.reason).toBe("Invalid passkey attestation");
    const plain = await walletAccount(Environment.PRODUCTION);
    await expectPublicError(register(plain.platformId, plain.accountId, new SoftwareAuthenticator(A.rpId, A.origin)), "UNAUTHENTICATED", "UNAUTHORIZED");
    expect((await register(plain.platformId, plain.accountId, new SoftwareAuthenticator(RP.rpId, RP.origin))).result.case).toBe("authMethod");
  });

  it("falls back to the deployment's RP once the platform clears its own", async () => {
    const { platformId, accountId } = await platformWithRp(A);
    await h.auth.updatePlatformConfig({ platformId, passkeyRelyingPartyId: "" });
    expect((await register(platformId, accountId, new SoftwareAuthenticator(RP.rpId, RP.origin))).result.case).toBe("authMethod");
  });
});
