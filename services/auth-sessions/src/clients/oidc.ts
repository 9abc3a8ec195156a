import { createLocalJWKSet, createRemoteJWKSet, customFetch, decodeJwt, errors as joseErrors, jwtVerify, type JWTVerifyGetKey } from "jose";
import { OIDC_ALGORITHMS, type OidcIssuerConfig } from "../config.js";
import { OidcIssuerUnavailable, OidcRejected, type OidcCheck, type OidcIdentity, type OidcVerifier } from "../domain/wallet/ports.js";
import { LIMITS } from "../domain/wallet/types.js";
import type { OidcFetch } from "./oidc-http.js";

export interface OidcVerifierOptions {
  issuers: OidcIssuerConfig[];
  /** The `iss` sandbox creates recognise structurally (never trusted by `verify`). */
  sandboxIssuer: string;
  /** How discovery documents and key sets are fetched (oidc-http.ts); needed by issuers without inline keys. */
  fetch?: OidcFetch;
  /** A fetched key set is used this long before it is fetched again (ms). */
  cacheMaxAgeMs?: number;
  /** The least time between two fetches of one key set: an unknown `kid` refetches only after it (ms). */
  cooldownMs?: number;
  /** Deadline of one fetch (ms). */
  timeoutMs?: number;
}

interface KnownIssuer {
  config: OidcIssuerConfig;
  /** The issuer's key resolver, once known (inline and jwksUrl: at once; discovery: after the first successful one). */
  keys?: JWTVerifyGetKey;
  discovering?: Promise<JWTVerifyGetKey>;
}

/**
 * OIDC identity tokens checked with jose against the operator's issuers: signature by a key of the
 * issuer's JWKS (asymmetric algorithms only), `iss` exactly, `aud` one of the issuer's audiences,
 * `exp`/`nbf`, and `iat` at most 60 s old (and not from the future beyond 60 s). Remote key sets
 * are jose's: cached for `cacheMaxAgeMs`, refetched (after the cooldown) when a token names a `kid`
 * the cached set lacks, which is how an issuer's key rotation reaches us. The sandbox issuer is
 * recognised structurally only (sandbox creates), never trusted by `verify`. The token itself is
 * never logged nor quoted in an error.
 */
export function createOidcVerifier(opts: OidcVerifierOptions): OidcVerifier {
  const { sandboxIssuer } = opts;
  const remoteOptions = {
    cacheMaxAge: opts.cacheMaxAgeMs ?? 600_000,
    cooldownDuration: opts.cooldownMs ?? 30_000,
    timeoutDuration: opts.timeoutMs ?? 5_000,
  };
  const issuers = new Map<string, KnownIssuer>();
  for (const config of opts.issuers) {
    const known: KnownIssuer = { config };
    if (config.jwks) known.keys = createLocalJWKSet(config.jwks as never);
    else if (config.jwksUrl) known.keys = remoteKeys(config.issuer, config.jwksUrl);
    issuers.set(config.issuer, known);
  }

  function requireFetch(): OidcFetch {
    if (!opts.fetch) throw new Error("the OIDC verifier was built without a fetch for remote key sets");
    return opts.fetch;
  }

  /** jose's remote key set; a failure to have the keys (not a key the set lacks) is the issuer's. */
  function remoteKeys(issuer: string, jwksUrl: string): JWTVerifyGetKey {
    const remote = createRemoteJWKSet(new URL(jwksUrl), { ...remoteOptions, [customFetch]: requireFetch() as never });
    return async (header, token) => {
      try {
        return await remote(header, token);
      } catch (err) {
        if (err instanceof joseErrors.JWKSNoMatchingKey || err instanceof joseErrors.JWKSMultipleMatchingKeys) throw err;
        throw new OidcIssuerUnavailable(issuer, `the key set of ${issuer} could not be fetched: ${describe(err)}`);
      }
    };
  }

  /** OpenID Connect Discovery 1.0: the issuer's configuration names its jwks_uri; its `issuer` must be the configured one. */
  async function discover(known: KnownIssuer): Promise<JWTVerifyGetKey> {
    const { issuer } = known.config;
    const url = `${issuer.replace(/\/$/, "")}/.well-known/openid-configuration`;
    let doc: { issuer?: unknown; jwks_uri?: unknown };
    try {
      const res = await requireFetch()(url, { method: "GET", redirect: "manual", headers: new Headers(), signal: AbortSignal.timeout(remoteOptions.timeoutDuration) });
      if (res.status !== 200) throw new Error(`answered HTTP ${res.status}`);
      doc = (await res.json()) as typeof doc;
    } catch (err) {
      throw new OidcIssuerUnavailable(issuer, `the discovery document of ${issuer} could not be fetched: ${describe(err)}`);
    }
    if (doc.issuer !== issuer) throw new OidcIssuerUnavailable(issuer, `the discovery document of ${issuer} names another issuer`);
    if (typeof doc.jwks_uri !== "string" || !/^https:\/\//.test(doc.jwks_uri)) {
      throw new OidcIssuerUnavailable(issuer, `the discovery document of ${issuer} has no https jwks_uri`);
    }
    return remoteKeys(issuer, doc.jwks_uri);
  }

  async function keysOf(known: KnownIssuer): Promise<JWTVerifyGetKey> {
    if (known.keys) return known.keys;
    // One discovery at a time; a failed one is not remembered (the next token tries again).
    known.discovering ??= discover(known).finally(() => (known.discovering = undefined));
    known.keys = await known.discovering;
    return known.keys;
  }

  function claimsOf(token: string) {
    try {
      return decodeJwt(token);
    } catch {
      throw new OidcRejected("not a JWT", "MALFORMED");
    }
  }

  function checkIat(iat: number | undefined, now: Date) {
    if (typeof iat !== "number") throw new OidcRejected("the token has no iat", "IAT_MISSING");
    const age = now.getTime() / 1000 - iat;
    if (age > LIMITS.oidcMaxAgeSeconds) throw new OidcRejected(`iat is ${Math.floor(age)} s old; at most ${LIMITS.oidcMaxAgeSeconds} s allowed`, "IAT_TOO_OLD");
    if (age < -LIMITS.oidcMaxAgeSeconds) throw new OidcRejected("iat is in the future", "IAT_IN_FUTURE");
  }

  return {
    async verify(token, now, platformId): Promise<OidcIdentity> {
      const { iss } = claimsOf(token);
      const known = typeof iss === "string" ? issuers.get(iss) : undefined;
      if (!known) throw new OidcRejected("the token's iss is not a configured issuer", "ISSUER_UNKNOWN");
      if (known.config.platforms && !known.config.platforms.includes(platformId)) {
        throw new OidcRejected("the token's iss is not an issuer this platform may use", "ISSUER_UNKNOWN");
      }
      const keys = await keysOf(known);
      let payload;
      try {
        ({ payload } = await jwtVerify(token, keys, {
          issuer: known.config.issuer,
          audience: known.config.audience,
          algorithms: [...(known.config.algorithms ?? OIDC_ALGORITHMS)],
          // An ID token always has them (OpenID Connect Core 1.0, section 2).
          requiredClaims: ["exp", "iat", "sub"],
          currentDate: now,
        }));
      } catch (err) {
        if (err instanceof joseErrors.JOSEError) throw new OidcRejected(err.message, checkOf(err));
        throw err;
      }
      checkIat(payload.iat, now);
      if (!payload.sub) throw new OidcRejected("the token has no sub", "SUBJECT_MISSING");
      return { issuer: known.config.issuer, subject: payload.sub, email: typeof payload.email === "string" ? payload.email : undefined };
    },

    inspect(token, now): OidcIdentity {
      const claims = claimsOf(token);
      const iss = claims.iss;
      if (typeof iss !== "string" || (iss !== sandboxIssuer && !issuers.has(iss))) throw new OidcRejected("the token's iss is not a known issuer", "ISSUER_UNKNOWN");
      if (!claims.sub) throw new OidcRejected("the token has no sub", "SUBJECT_MISSING");
      checkIat(claims.iat, now);
      return { issuer: iss, subject: claims.sub, email: typeof claims.email === "string" ? claims.email : undefined };
    },
  };
}

/** The check a jose failure stands for. */
function checkOf(err: InstanceType<typeof joseErrors.JOSEError>): OidcCheck {
  if (err instanceof joseErrors.JWTExpired) return "EXPIRED";
  if (err instanceof joseErrors.JWTClaimValidationFailed) {
    if (err.reason === "missing") return err.claim === "iat" ? "IAT_MISSING" : err.claim === "sub" ? "SUBJECT_MISSING" : "INVALID_CLAIMS";
    if (err.claim === "aud") return "AUDIENCE";
    if (err.claim === "iss") return "ISSUER_UNKNOWN";
    if (err.claim === "nbf") return "NOT_YET_VALID";
    if (err.claim === "iat") return "IAT_IN_FUTURE";
    return "INVALID_CLAIMS";
  }
  if (err instanceof joseErrors.JOSEAlgNotAllowed || err instanceof joseErrors.JOSENotSupported) return "ALGORITHM_NOT_ALLOWED";
  if (err instanceof joseErrors.JWKSNoMatchingKey || err instanceof joseErrors.JWKSMultipleMatchingKeys) return "KEY_UNKNOWN";
  if (err instanceof joseErrors.JWSSignatureVerificationFailed) return "SIGNATURE";
  if (err instanceof joseErrors.JWSInvalid || err instanceof joseErrors.JWTInvalid) return "MALFORMED";
  return "INVALID_CLAIMS";
}

/** A fetch failure in words that name no socket detail beyond the cause's kind. */
function describe(err: unknown): string {
  if (err instanceof joseErrors.JWKSTimeout || (err as Error)?.name === "TimeoutError" || (err as Error)?.name === "AbortError") return "timed out";
  const code = (err as NodeJS.ErrnoException)?.code;
  const cause = (err as { cause?: NodeJS.ErrnoException })?.cause;
  if (code && /CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO/.test(code)) return "TLS verification failed";
  if (err instanceof Error && !code && !cause) return err.message;
  return code ?? cause?.code ?? "connection failed";
}
