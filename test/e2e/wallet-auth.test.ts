import { randomUUID } from "node:crypto";
import { p256 } from "@noble/curves/nist.js";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { otpCodeOf, remoteMailbox, startMailCatcher, type MailCatcher, type Mailbox } from "../support/mail-catcher.js";
import { SoftwareAuthenticator, localIssuer, newClientKeyPair, openSealed, stamp, unsignedJwt, type LocalIssuer } from "../support/wallet-client.js";
import { E2E_WALLET_ENCRYPTION_KEY } from "../infra/split-setup.js";
import { individual } from "./customers-fixtures.js";
import { eventually, mode, skipReason, startTestSystem, type Caller, type TestSystem } from "./harness.js";

/**
 * Embedded-wallet authentication through the gateway, as a client does it: a P-256 client key,
 * the HPKE-sealed session key opened locally, payloadToSign stamped with it, a software WebAuthn
 * authenticator and (embedded mode) a local OIDC issuer. Each flow runs on a sandbox platform with
 * the magic values and on a production platform with real cryptography. OTP mails go to a local
 * SMTP catcher (embedded: started here; split: by test/infra/split-setup.ts, read over HTTP).
 */

const RP = { rpId: "localhost", origin: "http://localhost" }; // the service's default relying party
const SANDBOX_ISSUER = "https://oidc.sandbox.corridor.local";
let sys: TestSystem;
let issuer: LocalIssuer | undefined;
let mailbox: Mailbox;
let catcher: MailCatcher | undefined;

beforeAll(async () => {
  if (skipReason()) return;
  if (mode === "embedded") {
    // Embedded services read process.env when built: trust a local issuer (inline JWKS).
    issuer = await localIssuer("https://issuer.e2e.local", "corridor-e2e");
    process.env.CORRIDOR_OIDC_ISSUERS = JSON.stringify([{ issuer: issuer.issuer, audience: issuer.audience, jwks: issuer.jwks }]);
    // Production wallets are only exported under an operator-set at-rest key.
    process.env.CORRIDOR_WALLET_ENCRYPTION_KEY = E2E_WALLET_ENCRYPTION_KEY;
    // OTP mails by real SMTP to a local catcher.
    catcher = await startMailCatcher();
    process.env.CORRIDOR_SMTP_URL = catcher.smtpUrl;
    mailbox = catcher;
  } else {
    // The split processes were started trusting this issuer (test/infra/split-setup.ts).
    const shared = inject("splitOidcIssuer")!;
    issuer = await localIssuer(shared.issuer, shared.audience, undefined, shared.privateJwk);
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

const expect401 = (res: { status: number; body: any }, reason: string) => {
  expect(res.status, JSON.stringify(res.body)).toBe(401);
  expect(res.body.code).toBe("UNAUTHORIZED");
  expect(res.body.details.reason).toBe(reason);
};

/** Signs a 202 challenge: the sandbox magic header, or a real stamp with the session key. */
const signer = (sandbox: boolean, key?: Uint8Array) => (challenge: { payloadToSign: string; requestId: string }) => ({
  "Request-Id": challenge.requestId,
  "Service-Wallet-Signature": sandbox || !key ? "sandbox-valid-signature" : stamp(challenge.payloadToSign, key),
});

describe.skipIf(Boolean(skipReason()))("embedded-wallet authentication", () => {
  for (const environment of ["SANDBOX", "PRODUCTION"] as const) {
    const sandbox = environment === "SANDBOX";

    describe(environment, () => {
      it("PASSKEY: registers, challenges with a client key, verifies an assertion and opens the sealed session key; then adds EMAIL_OTP by signed retry, revokes it, exports the wallet", async () => {
        const p = await sys.createPlatform({ environment });
        const accountId = await walletAccount(p);
        const authenticator = new SoftwareAuthenticator(RP.rpId, RP.origin);
        const regChallenge = Buffer.from(`registration-${environment}`).toString("base64url");
        const created = await p.call("POST", "/auth/credentials", {
          type: "PASSKEY",
          accountId,
          nickname: "Laptop",
          challenge: regChallenge,
          attestation: authenticator.register(regChallenge),
        });
        expect(created.status, JSON.stringify(created.body)).toBe(201);
        expect(Object.keys(created.body).sort()).toEqual(["accountId", "createdAt", "id", "nickname", "type", "updatedAt"]);
        const passkeyId = created.body.id;
        // One PASSKEY per account: a second registration is refused before any signed retry is asked for.
        const second = new SoftwareAuthenticator(RP.rpId, RP.origin);
        const dupPasskey = await p.call("POST", "/auth/credentials", { type: "PASSKEY", accountId, nickname: "Phone", challenge: regChallenge, attestation: second.register(regChallenge) });
        expect(dupPasskey.status, JSON.stringify(dupPasskey.body)).toBe(400);
        expect(dupPasskey.body.code).toBe("PASSKEY_CREDENTIAL_ALREADY_EXISTS");

        // PASSKEY challenge needs clientPublicKey.
        const noKey = await p.call("POST", `/auth/credentials/${passkeyId}/challenge`, {});
        expect(noKey.status).toBe(400);
        const noBody = await p.call("POST", `/auth/credentials/${passkeyId}/challenge`);
        expect(noBody.status).toBe(400);
        expect(noBody.body.details.errors.map((e: { field: string }) => e.field)).toEqual(noKey.body.details.errors.map((e: { field: string }) => e.field));
        const client = newClientKeyPair();
        const ch = await p.call("POST", `/auth/credentials/${passkeyId}/challenge`, { clientPublicKey: client.clientPublicKey });
        expect(ch.status, JSON.stringify(ch.body)).toBe(200);
        expect(ch.body).toEqual({ challenge: expect.any(String), requestId: expect.any(String), expiresAt: expect.any(String) });
        const limited = await p.call("POST", `/auth/credentials/${passkeyId}/challenge`, { clientPublicKey: client.clientPublicKey });
        expect(limited.status).toBe(429);
        expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);

        const assertion = authenticator.assert(ch.body.challenge);
        // The Request-Id header names the challenge (and so the client key): without it 400 naming the
        // header, with one this API never issued 401.
        const noRequestId = await p.call("POST", `/auth/credentials/${passkeyId}/verify`, { type: "PASSKEY", assertion });
        expect(noRequestId.status, JSON.stringify(noRequestId.body)).toBe(400);
        expect(noRequestId.body.code).toBe("INVALID_INPUT");
        expect(noRequestId.body.details.errors).toEqual([{ field: "headers.Request-Id", reason: expect.stringContaining("required") }]);
        const unknownRequestId = await p.call("POST", `/auth/credentials/${passkeyId}/verify`, { type: "PASSKEY", assertion }, { "Request-Id": `Request:${randomUUID()}` });
        expect401(unknownRequestId, "Unknown Request-Id");
        const bad = await p.call("POST", `/auth/credentials/${passkeyId}/verify`, { type: "PASSKEY", assertion: { ...assertion, signature: Buffer.from("nope").toString("base64url") } }, { "Request-Id": ch.body.requestId });
        expect401(bad, "Invalid passkey signature");
        const verified = await p.call(
          "POST",
          `/auth/credentials/${passkeyId}/verify`,
          { type: "PASSKEY", assertion: sandbox ? { ...assertion, signature: "sandbox-valid-passkey-signature" } : assertion },
          { "Request-Id": ch.body.requestId },
        );
        expect(verified.status, JSON.stringify(verified.body)).toBe(200);
        expect(Object.keys(verified.body).sort()).toEqual(["accountId", "createdAt", "encryptedSessionSigningKey", "expiresAt", "id", "nickname", "type", "updatedAt"]);
        expect(new Date(verified.body.expiresAt).getTime() - new Date(verified.body.createdAt).getTime()).toBe(15 * 60_000);
        const sessionKey = await openSealed(verified.body.encryptedSessionSigningKey, client);
        const sign = signer(sandbox, sessionKey);

        // A second credential needs a signed retry.
        const emailBody = { type: "EMAIL_OTP", accountId, email: "wallet-user@example.com" };
        const first = await p.call("POST", "/auth/credentials", emailBody);
        expect(first.status, JSON.stringify(first.body)).toBe(202);
        expect(first.body.type).toBe("EMAIL_OTP");
        expect(JSON.parse(first.body.payloadToSign)).toMatchObject({ requestId: first.body.requestId, accountId, operation: "ADD_CREDENTIAL" });
        expect401(await p.call("POST", "/auth/credentials", emailBody, { "Request-Id": first.body.requestId, "Service-Wallet-Signature": stamp(first.body.payloadToSign, newClientKeyPair().secretKey) }), "Invalid Service-Wallet-Signature");
        const mismatch = await p.call("POST", "/auth/credentials", { ...emailBody, email: "other@example.com" }, sign(first.body));
        expect(mismatch.status).toBe(401);
        const added = await p.call("POST", "/auth/credentials", emailBody, sign(first.body));
        expect(added.status, JSON.stringify(added.body)).toBe(201);
        expect(added.body).toMatchObject({ type: "EMAIL_OTP", nickname: "wallet-user@example.com" });
        const reused = await p.call("POST", "/auth/credentials", { ...emailBody }, sign(first.body));
        expect(reused.status).toBe(400); // a second EMAIL_OTP is refused before the signature is looked at
        expect(reused.body.code).toBe("EMAIL_OTP_CREDENTIAL_ALREADY_EXISTS");

        const list = await p.call("GET", `/auth/credentials?accountId=${encodeURIComponent(accountId)}`);
        expect(list.body.data.map((m: { type: string }) => m.type)).toEqual(["PASSKEY", "EMAIL_OTP"]);
        expect(list.body.hasMore).toBeUndefined();

        // EMAIL_OTP: challenge answers the AuthMethod; a wrong code is 401 Invalid OTP code. Grid's
        // clients send no body at all (issue 27).
        const otpCh = await p.call("POST", `/auth/credentials/${added.body.id}/challenge`);
        expect(otpCh.status).toBe(200);
        expect(otpCh.body.id).toBe(added.body.id);
        expect401(await p.call("POST", `/auth/credentials/${added.body.id}/verify`, { type: "EMAIL_OTP", otp: "999999", clientPublicKey: newClientKeyPair().clientPublicKey }), "Invalid OTP code");

        // Revoke the EMAIL_OTP credential with the passkey's session.
        const rev = await p.call("DELETE", `/auth/credentials/${added.body.id}`);
        expect(rev.status, JSON.stringify(rev.body)).toBe(202);
        const revoked = await p.call("DELETE", `/auth/credentials/${added.body.id}`, undefined, sign(rev.body));
        expect(revoked.status, JSON.stringify(revoked.body)).toBe(204);
        // A used Request-Id is 401 whatever became of its target (here: already revoked).
        expect401(await p.call("DELETE", `/auth/credentials/${added.body.id}`, undefined, sign(rev.body)), "Request-Id already used");
        expect((await p.call("DELETE", `/auth/credentials/${added.body.id}`)).status).toBe(404);
        const last = await p.call("DELETE", `/auth/credentials/${passkeyId}`);
        expect(last.status).toBe(400);
        expect(last.body.code).toBe("LAST_CREDENTIAL");

        // Export: 202, signed retry 200 sealed to the export key; reuse 401.
        const exportKey = newClientKeyPair();
        const ex = await p.call("POST", `/internal-accounts/${accountId}/export`, { clientPublicKey: exportKey.clientPublicKey });
        expect(ex.status, JSON.stringify(ex.body)).toBe(202);
        const exported = await p.call("POST", `/internal-accounts/${accountId}/export`, { clientPublicKey: exportKey.clientPublicKey }, sign(ex.body));
        expect(exported.status, JSON.stringify(exported.body)).toBe(200);
        expect(exported.body.id).toBe(accountId);
        expect(await openSealed(exported.body.encryptedWalletCredentials, exportKey)).toHaveLength(32);
        const exReuse = await p.call("POST", `/internal-accounts/${accountId}/export`, { clientPublicKey: exportKey.clientPublicKey }, sign(ex.body));
        expect401(exReuse, "Request-Id already used");

        // Sessions: list, revoke by signed retry (204), then the revoked session cannot sign.
        const sessions = await p.call("GET", `/auth/sessions?accountId=${encodeURIComponent(accountId)}`);
        expect(sessions.body.data.map((s: { id: string }) => s.id)).toEqual([verified.body.id]);
        const rs = await p.call("DELETE", `/auth/sessions/${verified.body.id}`);
        expect(rs.status).toBe(202);
        expect((await p.call("DELETE", `/auth/sessions/${verified.body.id}`, undefined, sign(rs.body))).status).toBe(204);
        expect((await p.call("GET", `/auth/sessions?accountId=${encodeURIComponent(accountId)}`)).body.data).toEqual([]);
        if (!sandbox) {
          const ex2 = await p.call("POST", `/internal-accounts/${accountId}/export`, { clientPublicKey: exportKey.clientPublicKey });
          expect401(await p.call("POST", `/internal-accounts/${accountId}/export`, { clientPublicKey: exportKey.clientPublicKey }, sign(ex2.body)), "Invalid Service-Wallet-Signature");
        }
      });

      it("OAUTH: creates from an identity token and verifies a fresh one into a session (re-authentication needs no new credential)", async () => {
        const p = await sys.createPlatform({ environment });
        const accountId = await walletAccount(p);
        const token = sandbox
          ? unsignedJwt({ iss: SANDBOX_ISSUER, sub: "oauth-user", email: "oauth@example.com", iat: Math.floor(Date.now() / 1000) })
          : await issuer!.mint({ sub: "oauth-user", email: "oauth@example.com" });
        const bogus = await p.call("POST", "/auth/credentials", { type: "OAUTH", accountId, oidcToken: "not-a-jwt" });
        expect401(bogus, "Invalid OIDC token");
        const created = await p.call("POST", "/auth/credentials", { type: "OAUTH", accountId, oidcToken: token });
        expect(created.status, JSON.stringify(created.body)).toBe(201);
        expect(created.body.nickname).toBe("oauth@example.com");
        const challenge = await p.call("POST", `/auth/credentials/${created.body.id}/challenge`, { clientPublicKey: newClientKeyPair().clientPublicKey });
        expect(challenge.status, JSON.stringify(challenge.body)).toBe(400);
        expect(challenge.body.code).toBe("CHALLENGE_NOT_SUPPORTED");
        for (let round = 0; round < 2; round++) {
          const client = newClientKeyPair();
          const fresh = sandbox ? "sandbox-valid-oidc-token" : await issuer!.mint({ sub: "oauth-user" });
          const res = await p.call("POST", `/auth/credentials/${created.body.id}/verify`, { type: "OAUTH", oidcToken: fresh, clientPublicKey: client.clientPublicKey });
          expect(res.status, JSON.stringify(res.body)).toBe(200);
          expect(await openSealed(res.body.encryptedSessionSigningKey, client)).toHaveLength(32);
        }
        expect((await p.call("GET", `/auth/sessions?accountId=${encodeURIComponent(accountId)}`)).body.data).toHaveLength(2);
        expect401(
          await p.call("POST", `/auth/credentials/${created.body.id}/verify`, { type: "OAUTH", oidcToken: sandbox ? "wrong-token" : "sandbox-valid-oidc-token", clientPublicKey: newClientKeyPair().clientPublicKey }),
          "Invalid OIDC token",
        );
      });

      it("EMAIL_OTP: first credential 201, a second EMAIL_OTP 400, verify (magic code in sandbox) and bad input", async () => {
        const p = await sys.createPlatform({ environment });
        const accountId = await walletAccount(p);
        const created = await p.call("POST", "/auth/credentials", { type: "EMAIL_OTP", accountId, email: "otp@example.com" });
        expect(created.status, JSON.stringify(created.body)).toBe(201);
        const dup = await p.call("POST", "/auth/credentials", { type: "EMAIL_OTP", accountId, email: "otp2@example.com" });
        expect(dup.status).toBe(400);
        expect(dup.body.code).toBe("EMAIL_OTP_CREDENTIAL_ALREADY_EXISTS");
        const badKey = await p.call("POST", `/auth/credentials/${created.body.id}/verify`, { type: "EMAIL_OTP", otp: "000000", clientPublicKey: "04abc" });
        expect(badKey.status).toBe(400);
        const client = newClientKeyPair();
        const res = await p.call("POST", `/auth/credentials/${created.body.id}/verify`, { type: "EMAIL_OTP", otp: "000000", clientPublicKey: client.clientPublicKey });
        if (sandbox) {
          expect(res.status, JSON.stringify(res.body)).toBe(200);
          expect(await openSealed(res.body.encryptedSessionSigningKey, client)).toHaveLength(32);
        } else {
          expect401(res, "Invalid OTP code"); // the magic code is sandbox-only; the real code is mailed
        }
        const foreign = await sys.createPlatform({ environment });
        expect((await foreign.call("GET", `/auth/credentials?accountId=${encodeURIComponent(accountId)}`)).status).toBe(404);
        expect((await foreign.call("POST", `/auth/credentials/${created.body.id}/challenge`, {})).status).toBe(404);
      });

      it("EMAIL_OTP by SMTP: the mailed 6-digit code verifies into a session whose key signs; a wrong code is 401; a re-challenge mails a fresh code that voids the old one, and another within 30 s is 429", async () => {
        const p = await sys.createPlatform({ environment });
        const accountId = await walletAccount(p);
        const email = `otp-${randomUUID()}@example.com`;
        const created = await p.call("POST", "/auth/credentials", { type: "EMAIL_OTP", accountId, email });
        expect(created.status, JSON.stringify(created.body)).toBe(201);
        const verify = (otp: string, client = newClientKeyPair()) =>
          p.call("POST", `/auth/credentials/${created.body.id}/verify`, { type: "EMAIL_OTP", otp, clientPublicKey: client.clientPublicKey });

        const firstMails = await mailbox.mailsTo(email);
        expect(firstMails).toHaveLength(1);
        const code1 = otpCodeOf(firstMails[0]!);
        expect(code1).toMatch(/^\d{6}$/);
        expect401(await verify(code1 === "123456" ? "654321" : "123456"), "Invalid OTP code");

        // Re-challenge: the AuthMethod unchanged, and a second mail with a fresh code.
        const again = await p.call("POST", `/auth/credentials/${created.body.id}/challenge`, {});
        expect(again.status, JSON.stringify(again.body)).toBe(200);
        expect(again.body).toEqual(created.body);
        const mails = await mailbox.mailsTo(email);
        expect(mails).toHaveLength(2);
        const code2 = otpCodeOf(mails[1]!);
        expect(code2).toMatch(/^\d{6}$/);
        const limited = await p.call("POST", `/auth/credentials/${created.body.id}/challenge`, {});
        expect(limited.status, JSON.stringify(limited.body)).toBe(429);
        expect(limited.body.code).toBe("RATE_LIMITED");
        const retryAfter = Number(limited.headers.get("retry-after"));
        expect(retryAfter).toBeGreaterThan(0);
        expect(retryAfter).toBeLessThanOrEqual(30);
        expect(await mailbox.mailsTo(email)).toHaveLength(2); // a refused re-challenge mails nothing

        // The old code is void (two random codes coincide once in a million; then there is nothing to check).
        if (code2 !== code1) expect401(await verify(code1), "Invalid OTP code");
        const client = newClientKeyPair();
        const verified = await verify(code2, client);
        expect(verified.status, JSON.stringify(verified.body)).toBe(200);
        const sessionKey = await openSealed(verified.body.encryptedSessionSigningKey, client);
        // The opened key is the session's signing key: a real stamp with it authorizes an export.
        const exportKey = newClientKeyPair();
        const ex = await p.call("POST", `/internal-accounts/${accountId}/export`, { clientPublicKey: exportKey.clientPublicKey });
        expect(ex.status, JSON.stringify(ex.body)).toBe(202);
        const exported = await p.call(
          "POST",
          `/internal-accounts/${accountId}/export`,
          { clientPublicKey: exportKey.clientPublicKey },
          { "Request-Id": ex.body.requestId, "Service-Wallet-Signature": stamp(ex.body.payloadToSign, sessionKey) },
        );
        expect(exported.status, JSON.stringify(exported.body)).toBe(200);
        expect401(await verify(code2), "Invalid OTP code"); // single use
      });

      it("a signed-retry requestId is single use for add credential, revoke credential and revoke session: replayed on another target it is 401 Request-Id already used and changes nothing", async () => {
        const p = await sys.createPlatform({ environment });
        const accountId = await walletAccount(p);
        const oidcToken = async (sub: string) =>
          sandbox ? unsignedJwt({ iss: SANDBOX_ISSUER, sub, iat: Math.floor(Date.now() / 1000) }) : await issuer!.mint({ sub });
        const first = await p.call("POST", "/auth/credentials", { type: "OAUTH", accountId, oidcToken: await oidcToken("user-a") });
        expect(first.status, JSON.stringify(first.body)).toBe(201);
        const login = async () => {
          const client = newClientKeyPair();
          const res = await p.call("POST", `/auth/credentials/${first.body.id}/verify`, {
            type: "OAUTH",
            oidcToken: sandbox ? "sandbox-valid-oidc-token" : await oidcToken("user-a"),
            clientPublicKey: client.clientPublicKey,
          });
          expect(res.status, JSON.stringify(res.body)).toBe(200);
          return { id: res.body.id as string, key: await openSealed(res.body.encryptedSessionSigningKey, client) };
        };
        const s1 = await login();
        const s2 = await login();
        // Real stamps by s1 in both environments, so only the requestId's use can fail a replay.
        const signed = (ch: { payloadToSign: string; requestId: string }) => ({ "Request-Id": ch.requestId, "Service-Wallet-Signature": stamp(ch.payloadToSign, s1.key) });

        // Add credential.
        const addB = { type: "OAUTH", accountId, oidcToken: await oidcToken("user-b") };
        const chB = await p.call("POST", "/auth/credentials", addB);
        expect(chB.status, JSON.stringify(chB.body)).toBe(202);
        const b = await p.call("POST", "/auth/credentials", addB, signed(chB.body));
        expect(b.status, JSON.stringify(b.body)).toBe(201);
        const addC = { type: "OAUTH", accountId, oidcToken: await oidcToken("user-c") };
        expect401(await p.call("POST", "/auth/credentials", addC, signed(chB.body)), "Request-Id already used");
        const chC = await p.call("POST", "/auth/credentials", addC);
        expect(chC.status, JSON.stringify(chC.body)).toBe(202);
        const c = await p.call("POST", "/auth/credentials", addC, signed(chC.body));
        expect(c.status, JSON.stringify(c.body)).toBe(201);

        // Revoke credential.
        const rb = await p.call("DELETE", `/auth/credentials/${b.body.id}`);
        expect(rb.status, JSON.stringify(rb.body)).toBe(202);
        expect((await p.call("DELETE", `/auth/credentials/${b.body.id}`, undefined, signed(rb.body))).status).toBe(204);
        expect401(await p.call("DELETE", `/auth/credentials/${c.body.id}`, undefined, signed(rb.body)), "Request-Id already used");

        // Revoke session.
        const rs = await p.call("DELETE", `/auth/sessions/${s2.id}`);
        expect(rs.status, JSON.stringify(rs.body)).toBe(202);
        expect((await p.call("DELETE", `/auth/sessions/${s2.id}`, undefined, signed(rs.body))).status).toBe(204);
        expect401(await p.call("DELETE", `/auth/sessions/${s1.id}`, undefined, signed(rs.body)), "Request-Id already used");
        // Replayed on the same, now revoked, targets: still 401, not 404 (without Request-Id: 404).
        expect401(await p.call("DELETE", `/auth/credentials/${b.body.id}`, undefined, signed(rb.body)), "Request-Id already used");
        expect401(await p.call("DELETE", `/auth/sessions/${s2.id}`, undefined, signed(rs.body)), "Request-Id already used");
        expect((await p.call("DELETE", `/auth/credentials/${b.body.id}`)).status).toBe(404);
        expect((await p.call("DELETE", `/auth/sessions/${s2.id}`)).status).toBe(404);
        // An unknown Request-Id on a missing target is 401 too.
        expect401(await p.call("DELETE", `/auth/sessions/Session:${randomUUID()}`, undefined, { "Request-Id": `Request:${randomUUID()}`, "Service-Wallet-Signature": "sandbox-valid-signature" }), "Unknown Request-Id");

        const credentials = await p.call("GET", `/auth/credentials?accountId=${encodeURIComponent(accountId)}`);
        expect(credentials.body.data.map((m: { id: string }) => m.id)).toEqual([first.body.id, c.body.id]);
        const sessions = await p.call("GET", `/auth/sessions?accountId=${encodeURIComponent(accountId)}`);
        expect(sessions.body.data.map((x: { id: string }) => x.id)).toEqual([s1.id]);
      });
    });
  }

  it("PASSKEY on a production platform with its own relying party (PATCH /config): registration and assertion are verified against its RP id and origins, not the deployment's; bad settings are 400 naming the field", async () => {
    const p = await sys.createPlatform({ environment: "PRODUCTION" });
    const own = { rpId: "wallet.acme.test", origin: "https://app.wallet.acme.test" };
    const expectFields = (res: { status: number; body: any }, fields: string[]) => {
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.code).toBe("INVALID_INPUT");
      expect(res.body.details.errors.map((e: { field: string }) => e.field)).toEqual(fields);
    };
    expectFields(await p.call("PATCH", "/config", { passkeyRelyingPartyId: own.rpId, passkeyOrigins: [own.origin, "https://evil.example"] }), ["body.passkeyOrigins[1]"]);
    expectFields(await p.call("PATCH", "/config", { passkeyRelyingPartyId: own.rpId, passkeyOrigins: ["http://app.wallet.acme.test"] }), ["body.passkeyOrigins[0]"]);
    expectFields(await p.call("PATCH", "/config", { passkeyRelyingPartyId: "https://wallet.acme.test", passkeyOrigins: [own.origin] }), ["body.passkeyRelyingPartyId"]);
    expectFields(await p.call("PATCH", "/config", { passkeyOrigins: [own.origin] }), ["body.passkeyOrigins"]);
    expectFields(await p.call("PATCH", "/config", { passkeyOrigins: own.origin }), ["body.passkeyOrigins"]);
    const unset = await p.call("GET", "/config");
    expect(unset.body.passkeyRelyingPartyId).toBeUndefined();
    expect(unset.body.passkeyOrigins).toBeUndefined();

    const patched = await p.call("PATCH", "/config", { passkeyRelyingPartyId: own.rpId, passkeyOrigins: [own.origin] });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body).toMatchObject({ passkeyRelyingPartyId: own.rpId, passkeyOrigins: [own.origin] });
    expect((await p.call("GET", "/config")).body).toMatchObject({ passkeyRelyingPartyId: own.rpId, passkeyOrigins: [own.origin] });

    const accountId = await walletAccount(p);
    const regChallenge = Buffer.from("registration-own-rp").toString("base64url");
    // An authenticator of the deployment's default relying party is refused here.
    const onDefault = new SoftwareAuthenticator(RP.rpId, RP.origin);
    expect401(
      await p.call("POST", "/auth/credentials", { type: "PASSKEY", accountId, nickname: "Default RP", challenge: regChallenge, attestation: onDefault.register(regChallenge) }),
      "Invalid passkey attestation",
    );
    const authenticator = new SoftwareAuthenticator(own.rpId, own.origin);
    const created = await p.call("POST", "/auth/credentials", { type: "PASSKEY", accountId, nickname: "Acme app", challenge: regChallenge, attestation: authenticator.register(regChallenge) });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const client = newClientKeyPair();
    const ch = await p.call("POST", `/auth/credentials/${created.body.id}/challenge`, { clientPublicKey: client.clientPublicKey });
    expect(ch.status, JSON.stringify(ch.body)).toBe(200);
    const verify = (assertion: unknown) => p.call("POST", `/auth/credentials/${created.body.id}/verify`, { type: "PASSKEY", assertion }, { "Request-Id": ch.body.requestId });
    expect401(await verify(authenticator.assert(ch.body.challenge, { origin: RP.origin })), "Invalid passkey signature");
    const verified = await verify(authenticator.assert(ch.body.challenge));
    expect(verified.status, JSON.stringify(verified.body)).toBe(200);
    expect(await openSealed(verified.body.encryptedSessionSigningKey, client)).toHaveLength(32);
  });

  it("clientPublicKey must be an uncompressed P-256 point in hex (04 + 128 hex digits, on the curve): otherwise 400 INVALID_INPUT naming body.clientPublicKey on challenge, verify and export", async () => {
    const p = await sys.createPlatform({ environment: "SANDBOX" });
    const accountId = await walletAccount(p);
    const authenticator = new SoftwareAuthenticator(RP.rpId, RP.origin);
    const regChallenge = Buffer.from("registration-key-checks").toString("base64url");
    const passkey = await p.call("POST", "/auth/credentials", { type: "PASSKEY", accountId, nickname: "Key checks", challenge: regChallenge, attestation: authenticator.register(regChallenge) });
    expect(passkey.status, JSON.stringify(passkey.body)).toBe(201);
    const oauthBody = { type: "OAUTH", accountId, oidcToken: unsignedJwt({ iss: SANDBOX_ISSUER, sub: "key-checks", iat: Math.floor(Date.now() / 1000) }) };
    const ch = await p.call("POST", "/auth/credentials", oauthBody);
    expect(ch.status, JSON.stringify(ch.body)).toBe(202);
    const oauth = await p.call("POST", "/auth/credentials", oauthBody, signer(true)(ch.body));
    expect(oauth.status, JSON.stringify(oauth.body)).toBe(201);

    const good = newClientKeyPair();
    const compressed = Buffer.from(p256.getPublicKey(good.secretKey, true)).toString("hex");
    const bad: Record<string, string> = {
      "compressed point": compressed,
      "prefix 02 at full length": `02${good.clientPublicKey.slice(2)}`,
      "one hex digit short": good.clientPublicKey.slice(0, -1),
      "one hex digit long": `${good.clientPublicKey}0`,
      "not hex": `04zz${good.clientPublicKey.slice(4)}`,
      "not on the curve": `04${"00".repeat(64)}`,
    };
    const expect400 = (res: { status: number; body: any }, what: string) => {
      expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBe(400);
      expect(res.body.code).toBe("INVALID_INPUT");
      expect(res.body.details.errors.map((e: { field: string }) => e.field)).toContain("body.clientPublicKey");
    };
    for (const [what, clientPublicKey] of Object.entries(bad)) {
      expect400(await p.call("POST", `/auth/credentials/${passkey.body.id}/challenge`, { clientPublicKey }), `challenge, ${what}`);
      expect400(await p.call("POST", `/auth/credentials/${oauth.body.id}/verify`, { type: "OAUTH", oidcToken: "sandbox-valid-oidc-token", clientPublicKey }), `verify, ${what}`);
      expect400(await p.call("POST", `/internal-accounts/${accountId}/export`, { clientPublicKey }), `export, ${what}`);
    }
    // The same calls with a valid key pass (so the refusals above were the key's).
    expect((await p.call("POST", `/auth/credentials/${passkey.body.id}/challenge`, { clientPublicKey: good.clientPublicKey })).status).toBe(200);
    expect((await p.call("POST", `/auth/credentials/${oauth.body.id}/verify`, { type: "OAUTH", oidcToken: "sandbox-valid-oidc-token", clientPublicKey: good.clientPublicKey })).status).toBe(200);
    expect((await p.call("POST", `/internal-accounts/${accountId}/export`, { clientPublicKey: good.clientPublicKey })).status).toBe(202);
  });
});
