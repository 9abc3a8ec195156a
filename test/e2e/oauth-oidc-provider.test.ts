import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import {
  E2E_OIDC_AUDIENCES,
  E2E_OIDC_JWKS_CACHE_MS,
  OIDC_OTHER_CLIENT,
  OIDC_RP_CLIENT,
  OIDC_SHORT_CLIENT,
  OidcProviderClient,
  kidOf,
  startOidcProvider,
  type RunningOidcProvider,
} from "../support/oidc-provider.js";
import { newClientKeyPair, openSealed } from "../support/wallet-client.js";
import { individual } from "./customers-fixtures.js";
import { eventually, mode, skipReason, startTestSystem, type Caller, type TestSystem } from "./harness.js";

/**
 * OAUTH credentials of a production platform against a real OpenID provider (issue 25, item 5):
 * `oidc-provider` on loopback HTTPS with a CA made for the run (test/support/oidc-provider.ts),
 * configured as the operator does (CORRIDOR_OIDC_ISSUERS by discovery, CORRIDOR_OIDC_CA_FILE).
 * Real ID tokens come out of its authorization-code flow; the system fetches its JWKS through the
 * guarded https client and verifies signature, iss, aud, exp and iat (≤ 60 s, real time). The
 * provider rotates its keys mid-test: a token of the new key verifies (the cached key set is
 * refetched for the unknown kid), and once the old key is withdrawn and the cache has aged out, a
 * token of the old key no longer does. Embedded: the provider runs here; split: in
 * test/infra/split-setup.ts, which started the processes trusting it.
 */

let sys: TestSystem;
let provider: RunningOidcProvider | undefined;
let stranger: RunningOidcProvider | undefined;
let idp: OidcProviderClient;

beforeAll(async () => {
  if (skipReason()) return;
  if (mode === "embedded") {
    // Embedded services read process.env when built: the operator's settings for this issuer.
    provider = await startOidcProvider();
    process.env.CORRIDOR_OIDC_ISSUERS = JSON.stringify([{ issuer: provider.issuer, audience: E2E_OIDC_AUDIENCES }]);
    process.env.CORRIDOR_OIDC_CA_FILE = provider.caFile;
    process.env.CORRIDOR_OIDC_ALLOW_LOOPBACK = "true";
    process.env.CORRIDOR_OIDC_JWKS_CACHE_MS = String(E2E_OIDC_JWKS_CACHE_MS);
    process.env.CORRIDOR_OIDC_JWKS_COOLDOWN_MS = "0";
    idp = new OidcProviderClient({ issuer: provider.issuer, caPem: provider.caPem });
  } else {
    idp = new OidcProviderClient(inject("splitOidcProvider")!);
  }
  // A second real provider the deployment does not trust (its tokens name another iss).
  stranger = await startOidcProvider();
  sys = await startTestSystem();
});
afterAll(async () => {
  await sys?.stop();
  await provider?.close();
  await stranger?.close();
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

/** A production platform's wallet with an OAUTH credential registered from a real ID token of `sub`. */
async function registered(sub: string): Promise<{ p: Caller; accountId: string; credentialId: string }> {
  const p = await sys.createPlatform({ environment: "PRODUCTION" });
  const accountId = await walletAccount(p);
  const created = await p.call("POST", "/auth/credentials", { type: "OAUTH", accountId, oidcToken: await idp.idToken(sub) });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return { p, accountId, credentialId: created.body.id };
}

const verify = (p: Caller, credentialId: string, oidcToken: string) =>
  p.call("POST", `/auth/credentials/${credentialId}/verify`, { type: "OAUTH", oidcToken, clientPublicKey: newClientKeyPair().clientPublicKey });

const expectRejected = (res: { status: number; body: any }, check: string) => {
  expect(res.status, JSON.stringify(res.body)).toBe(401);
  expect(res.body).toMatchObject({ status: 401, code: "UNAUTHORIZED", details: { reason: "Invalid OIDC token", check } });
  expect(typeof res.body.message).toBe("string");
};

describe.skipIf(Boolean(skipReason()))("OAUTH credentials against a real OpenID provider (production platform)", () => {
  it("registers a credential from a real ID token and verifies a fresh one into a session whose sealed key opens", async () => {
    const sub = `alice-${randomUUID().slice(0, 8)}`;
    const p = await sys.createPlatform({ environment: "PRODUCTION" });
    const accountId = await walletAccount(p);
    const token = await idp.idToken(sub);
    expect(decodeJwt(token)).toMatchObject({ iss: idp.ref.issuer, aud: OIDC_RP_CLIENT, sub });

    const created = await p.call("POST", "/auth/credentials", { type: "OAUTH", accountId, oidcToken: token });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ type: "OAUTH", accountId, nickname: `${sub}@oidc.e2e.example` });

    const client = newClientKeyPair();
    const session = await p.call("POST", `/auth/credentials/${created.body.id}/verify`, { type: "OAUTH", oidcToken: await idp.idToken(sub), clientPublicKey: client.clientPublicKey });
    expect(session.status, JSON.stringify(session.body)).toBe(200);
    expect(session.body).toMatchObject({ type: "OAUTH", accountId });
    expect(await openSealed(session.body.encryptedSessionSigningKey, client)).toHaveLength(32);

    // The credential is bound to the issuer and subject it was registered with.
    expectRejected(await verify(p, created.body.id, await idp.idToken(`mallory-${randomUUID().slice(0, 8)}`)), "SUBJECT_MISMATCH");
    // Production never takes the sandbox magic value.
    expectRejected(await verify(p, created.body.id, "sandbox-valid-oidc-token"), "MALFORMED");
  });

  it("refuses a wrong audience, an unknown issuer, an expired token, an iat older than 60 s and a key the issuer never had; nothing is registered", async () => {
    const sub = `bob-${randomUUID().slice(0, 8)}`;
    const { p, accountId, credentialId } = await registered(sub);

    // aud: a real token of the same provider for another client.
    const otherAud = await idp.idToken(sub, OIDC_OTHER_CLIENT);
    expect(decodeJwt(otherAud).aud).toBe(OIDC_OTHER_CLIENT);
    expectRejected(await verify(p, credentialId, otherAud), "AUDIENCE");

    // iss: a real token of a provider the deployment does not trust.
    const foreign = await new OidcProviderClient({ issuer: stranger!.issuer, caPem: stranger!.caPem }).idToken(sub);
    expectRejected(await verify(p, credentialId, foreign), "ISSUER_UNKNOWN");

    // exp: a token of a client whose ID tokens live one second, presented after it expired.
    const short = await idp.idToken(sub, OIDC_SHORT_CLIENT);
    const { exp } = decodeJwt(short);
    await sleep(Math.max(0, exp! * 1000 - Date.now()) + 1_100);
    // (the short client is one of the operator's audiences: the token fails on its expiry alone.)
    expectRejected(await verify(p, credentialId, short), "EXPIRED");

    // iat: a token the provider issued 90 s ago, not expired, signed by its current key.
    const held = await idp.heldToken(sub, 90);
    expect(Math.floor(Date.now() / 1000) - decodeJwt(held).iat!).toBeGreaterThanOrEqual(90);
    expectRejected(await verify(p, credentialId, held), "IAT_TOO_OLD");

    // signature: the issuer's iss and our aud, but a key that is in no JWKS of the issuer.
    expectRejected(await verify(p, credentialId, await idp.forgedToken(sub)), "KEY_UNKNOWN");

    // The same failures on registration leave the account as it was.
    for (const [token, check] of [
      [await idp.idToken(`carol-${randomUUID().slice(0, 8)}`, OIDC_OTHER_CLIENT), "AUDIENCE"],
      [await idp.forgedToken(`carol-${randomUUID().slice(0, 8)}`), "KEY_UNKNOWN"],
      [await idp.heldToken(`carol-${randomUUID().slice(0, 8)}`, 90), "IAT_TOO_OLD"],
    ] as const) {
      expectRejected(await p.call("POST", "/auth/credentials", { type: "OAUTH", accountId, oidcToken: token }), check);
    }
    const list = await p.call("GET", `/auth/credentials?accountId=${encodeURIComponent(accountId)}`);
    expect(list.body.data.map((m: { id: string }) => m.id)).toEqual([credentialId]);

    // And the credential still verifies with a good token.
    expect((await verify(p, credentialId, await idp.idToken(sub))).status).toBe(200);
  });

  it("follows the provider's key rotation: a new key's token verifies at once (refetch on unknown kid); a withdrawn key's token fails once the cached key set has aged out", async () => {
    const sub = `dave-${randomUUID().slice(0, 8)}`;
    const { p, credentialId } = await registered(sub);
    const oldToken = await idp.idToken(sub);
    const oldKid = kidOf(oldToken)!;
    expect((await verify(p, credentialId, oldToken)).status).toBe(200);

    // A new signing key goes first in the JWKS; the old one is still published.
    const kids = await idp.rotate("add");
    expect(kids[1]).toBe(oldKid);
    const newToken = await idp.idToken(sub);
    expect(kidOf(newToken)).toBe(kids[0]);
    const withNew = await verify(p, credentialId, newToken);
    expect(withNew.status, JSON.stringify(withNew.body)).toBe(200);
    expect((await verify(p, credentialId, oldToken)).status).toBe(200);

    // The old key is withdrawn. Once the cached key set is older than the cache age, the next
    // verification fetches the JWKS again and the old key's token (still fresh, iat < 60 s) fails.
    expect(await idp.rotate("replace")).toEqual([kids[0]]);
    await sleep(E2E_OIDC_JWKS_CACHE_MS + 500);
    expectRejected(await verify(p, credentialId, oldToken), "KEY_UNKNOWN");
    expect((await verify(p, credentialId, await idp.idToken(sub))).status).toBe(200);
  });
});
