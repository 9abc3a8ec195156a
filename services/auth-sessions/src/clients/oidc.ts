import { createLocalJWKSet, createRemoteJWKSet, decodeJwt, errors as joseErrors, jwtVerify, type JWTVerifyGetKey } from "jose";
import type { OidcIssuerConfig } from "../config.js";
import { OidcRejected, type OidcIdentity, type OidcVerifier } from "../domain/wallet/ports.js";
import { LIMITS } from "../domain/wallet/types.js";

/**
 * OIDC identity tokens checked with jose against the configured issuers: signature by a key of the
 * issuer's JWKS, iss, aud, exp/nbf, and iat at most 60 s old (and not from the future beyond 60 s).
 * The sandbox issuer is recognised structurally only (sandbox creates), never trusted by `verify`.
 */
export function createOidcVerifier(issuers: OidcIssuerConfig[], sandboxIssuer: string): OidcVerifier {
  const keySets = new Map<string, { config: OidcIssuerConfig; keys: JWTVerifyGetKey }>();
  for (const config of issuers) {
    const keys = config.jwks ? createLocalJWKSet(config.jwks as never) : createRemoteJWKSet(new URL(config.jwksUrl!));
    keySets.set(config.issuer, { config, keys });
  }

  function claimsOf(token: string) {
    try {
      return decodeJwt(token);
    } catch {
      throw new OidcRejected("not a JWT");
    }
  }

  function checkIat(iat: number | undefined, now: Date) {
    if (typeof iat !== "number") throw new OidcRejected("the token has no iat");
    const age = now.getTime() / 1000 - iat;
    if (age > LIMITS.oidcMaxAgeSeconds) throw new OidcRejected(`iat is ${Math.floor(age)} s old; at most ${LIMITS.oidcMaxAgeSeconds} s allowed`);
    if (age < -LIMITS.oidcMaxAgeSeconds) throw new OidcRejected("iat is in the future");
  }

  return {
    async verify(token, now): Promise<OidcIdentity> {
      const { iss } = claimsOf(token);
      const known = typeof iss === "string" ? keySets.get(iss) : undefined;
      if (!known) throw new OidcRejected("the token's iss is not a configured issuer");
      let payload;
      try {
        ({ payload } = await jwtVerify(token, known.keys, { issuer: known.config.issuer, audience: known.config.audience, currentDate: now }));
      } catch (err) {
        if (err instanceof joseErrors.JOSEError) throw new OidcRejected(err.message);
        throw err;
      }
      checkIat(payload.iat, now);
      if (!payload.sub) throw new OidcRejected("the token has no sub");
      return { issuer: known.config.issuer, subject: payload.sub, email: typeof payload.email === "string" ? payload.email : undefined };
    },

    inspect(token, now): OidcIdentity {
      const claims = claimsOf(token);
      const iss = claims.iss;
      if (typeof iss !== "string" || (iss !== sandboxIssuer && !keySets.has(iss))) throw new OidcRejected("the token's iss is not a known issuer");
      if (!claims.sub) throw new OidcRejected("the token has no sub");
      checkIat(claims.iat, now);
      return { issuer: iss, subject: claims.sub, email: typeof claims.email === "string" ? claims.email : undefined };
    },
  };
}
