import { AppError } from "@corridor/kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  OIDC_OTHER_CLIENT,
  OIDC_RP_CLIENT,
  OidcProviderClient,
  startOidcProvider,
  type RunningOidcProvider,
} from "../../../test/support/oidc-provider.js";
import { createOidcFetch } from "../src/clients/oidc-http.js";
import { createOidcVerifier, type OidcVerifierOptions } from "../src/clients/oidc.js";
import { loadWalletAuthConfig, type OidcIssuerConfig } from "../src/config.js";
import { oidcFailure } from "../src/domain/wallet/context.js";
import { OidcIssuerUnavailable, OidcRejected } from "../src/domain/wallet/ports.js";

// The verifier on its own against a real OpenID provider (oidc-provider on loopback HTTPS, a CA of
// the run): discovery, the guarded fetch (CA, loopback opt-in), per-platform issuers, allowed
// algorithms, the JWKS cooldown, and the issuer being unreachable. The public answers (401 with
// details.check, 503 OIDC_ISSUER_UNAVAILABLE) end to end: test/e2e/oauth-oidc-provider.test.ts.

let provider: RunningOidcProvider;
let idp: OidcProviderClient;
beforeAll(async () => {
  provider = await startOidcProvider();
  idp = new OidcProviderClient({ issuer: provider.issuer, caPem: provider.caPem });
});
afterAll(() => provider?.close());

const now = () => new Date();
function verifier(issuer: Partial<OidcIssuerConfig> = {}, opts: { caPem?: string | null; allowLoopback?: boolean } & Partial<OidcVerifierOptions> = {}) {
  const { fetch } = createOidcFetch({ allowLoopback: opts.allowLoopback ?? true, allowedRanges: [], caPem: opts.caPem === null ? undefined : (opts.caPem ?? provider.caPem) });
  return createOidcVerifier({ issuers: [{ issuer: provider.issuer, audience: OIDC_RP_CLIENT, ...issuer }], sandboxIssuer: "https://sandbox.invalid", fetch, cooldownMs: 0, ...opts });
}

async function rejection(p: Promise<unknown>): Promise<OidcRejected> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OidcRejected);
  return err as OidcRejected;
}

async function unavailable(p: Promise<unknown>): Promise<OidcIssuerUnavailable> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OidcIssuerUnavailable);
  return err as OidcIssuerUnavailable;
}

describe("OIDC verifier against a real provider", () => {
  it("finds the keys by discovery through the operator's CA and verifies a real ID token", async () => {
    const who = await verifier().verify(await idp.idToken("u-discovery"), now(), "Platform:a");
    expect(who).toEqual({ issuer: provider.issuer, subject: "u-discovery", email: "u-discovery@oidc.e2e.example" });
    // The JWKS URL given instead of discovery.
    expect((await verifier({ jwksUrl: `${provider.issuer}/jwks` }).verify(await idp.idToken("u-jwks"), now(), "Platform:a")).subject).toBe("u-jwks");
  });

  it("keeps TLS verification: without the operator's CA the keys cannot be had (unavailable, not a rejected token)", async () => {
    const err = await unavailable(verifier({}, { caPem: null }).verify(await idp.idToken("u-tls"), now(), "Platform:a"));
    expect(err.issuer).toBe(provider.issuer);
    expect(err.message).toMatch(/could not be fetched/);
  });

  it("reaches a loopback issuer only when the operator allows loopback", async () => {
    const err = await unavailable(verifier({}, { allowLoopback: false }).verify(await idp.idToken("u-loop"), now(), "Platform:a"));
    expect(err.message).toMatch(/could not be fetched/);
  });

  it("requires the discovery document to name the configured issuer exactly", async () => {
    const v = createOidcVerifier({
      issuers: [{ issuer: `${provider.issuer}/`, audience: OIDC_RP_CLIENT }],
      sandboxIssuer: "https://sandbox.invalid",
      fetch: createOidcFetch({ allowLoopback: true, allowedRanges: [], caPem: provider.caPem }).fetch,
    });
    // The token's iss (without the slash) is not that issuer; a token naming it with the slash would need its keys first.
    expect((await rejection(v.verify(await idp.idToken("u-slash"), now(), "Platform:a"))).check).toBe("ISSUER_UNKNOWN");
    const forged = `${Buffer.from(JSON.stringify({ alg: "RS256", kid: "x" })).toString("base64url")}.${Buffer.from(JSON.stringify({ iss: `${provider.issuer}/`, sub: "s" })).toString("base64url")}.c2ln`;
    expect((await unavailable(v.verify(forged, now(), "Platform:a"))).message).toMatch(/names another issuer/);
  });

  it("limits an issuer to its platforms and to its algorithms; refuses another audience", async () => {
    const token = await idp.idToken("u-scope");
    expect((await rejection(verifier({ platforms: ["Platform:a"] }).verify(token, now(), "Platform:b"))).check).toBe("ISSUER_UNKNOWN");
    expect((await verifier({ platforms: ["Platform:a"] }).verify(token, now(), "Platform:a")).subject).toBe("u-scope");
    expect((await rejection(verifier({ algorithms: ["ES256"] }).verify(token, now(), "Platform:a"))).check).toBe("ALGORITHM_NOT_ALLOWED");
    expect((await rejection(verifier().verify(await idp.idToken("u-scope", OIDC_OTHER_CLIENT), now(), "Platform:a"))).check).toBe("AUDIENCE");
  });

  it("refetches the JWKS for an unknown kid only after the cooldown", async () => {
    const slow = verifier({}, { cooldownMs: 60_000 });
    const eager = verifier({}, { cooldownMs: 0 });
    await slow.verify(await idp.idToken("u-rot"), now(), "Platform:a");
    await eager.verify(await idp.idToken("u-rot"), now(), "Platform:a");
    await idp.rotate("add");
    const rotated = await idp.idToken("u-rot");
    // Fetched less than the cooldown ago: the new kid is not looked for yet.
    expect((await rejection(slow.verify(rotated, now(), "Platform:a"))).check).toBe("KEY_UNKNOWN");
    expect((await eager.verify(rotated, now(), "Platform:a")).subject).toBe("u-rot");
  });

  it("an issuer that does not answer is unavailable (503 OIDC_ISSUER_UNAVAILABLE), never a 401 or a 500", async () => {
    const gone = await startOidcProvider();
    const goneIdp = new OidcProviderClient({ issuer: gone.issuer, caPem: gone.caPem });
    const token = await goneIdp.idToken("u-gone");
    await gone.close();
    const v = createOidcVerifier({
      issuers: [{ issuer: gone.issuer, audience: OIDC_RP_CLIENT }],
      sandboxIssuer: "https://sandbox.invalid",
      fetch: createOidcFetch({ allowLoopback: true, allowedRanges: [], caPem: gone.caPem }).fetch,
      timeoutMs: 2_000,
    });
    const err = await unavailable(v.verify(token, now(), "Platform:a"));
    let mapped: unknown;
    try {
      oidcFailure(err);
    } catch (e) {
      mapped = e;
    }
    expect(mapped).toBeInstanceOf(AppError);
    expect(mapped).toMatchObject({ code: "OIDC_ISSUER_UNAVAILABLE", details: { issuer: gone.issuer } });
    // A rejected token maps to 401 with the check named.
    try {
      oidcFailure(new OidcRejected("x", "AUDIENCE"));
    } catch (e) {
      mapped = e;
    }
    expect(mapped).toMatchObject({ code: "UNAUTHORIZED", details: { reason: "Invalid OIDC token", check: "AUDIENCE" } });
  });
});

describe("CORRIDOR_OIDC_ISSUERS", () => {
  const load = (issuers: unknown) => () => loadWalletAuthConfig({ CORRIDOR_OIDC_ISSUERS: JSON.stringify(issuers) });
  it("takes discovery, jwksUrl or inline keys, and refuses what cannot be fetched safely", () => {
    expect(load([{ issuer: "https://id.example.com", audience: "a" }])().CORRIDOR_OIDC_ISSUERS).toHaveLength(1);
    expect(load([{ issuer: "https://id.example.com", audience: ["a", "b"], jwksUrl: "https://id.example.com/keys", platforms: ["Platform:x"], algorithms: ["ES256"] }])).not.toThrow();
    expect(load([{ issuer: "id", audience: "a", jwks: { keys: [] } }])).not.toThrow();
    expect(load([{ issuer: "https://id.example.com", audience: "a", jwksUrl: "http://id.example.com/keys" }])).toThrow(/CORRIDOR_OIDC_ISSUERS/);
    expect(load([{ issuer: "http://id.example.com", audience: "a" }])).toThrow(/CORRIDOR_OIDC_ISSUERS/);
    expect(load([{ issuer: "https://id.example.com", audience: "a", jwksUrl: "https://id.example.com/keys", jwks: { keys: [] } }])).toThrow(/CORRIDOR_OIDC_ISSUERS/);
    expect(load([{ issuer: "https://id.example.com", audience: "a", algorithms: ["HS256"] }])).toThrow(/CORRIDOR_OIDC_ISSUERS/);
    expect(load([{ issuer: "https://id.example.com", audience: "a", audiance: "typo" }])).toThrow(/CORRIDOR_OIDC_ISSUERS/);
  });

  it("has one default for each fetch setting", () => {
    const c = loadWalletAuthConfig({});
    expect([c.CORRIDOR_OIDC_ALLOW_LOOPBACK, c.CORRIDOR_OIDC_ALLOWED_RANGES, c.CORRIDOR_OIDC_CA_FILE]).toEqual([false, [], undefined]);
    expect([c.CORRIDOR_OIDC_JWKS_CACHE_MS, c.CORRIDOR_OIDC_JWKS_COOLDOWN_MS, c.CORRIDOR_OIDC_HTTP_TIMEOUT_MS]).toEqual([600_000, 30_000, 5_000]);
  });
});
