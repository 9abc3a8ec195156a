import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/**
 * API token credentials. The client id is public (the Basic username): "cli_" + 16 random bytes
 * base64url, so it is unguessable yet short and never contains ':' (which Basic cannot carry in a
 * username). The secret is 32 random bytes base64url (decisions §2); only its SHA-256 is stored.
 */
export const CLIENT_ID_PREFIX = "cli_";

export function newClientId(): string {
  return CLIENT_ID_PREFIX + randomBytes(16).toString("base64url");
}

export function newClientSecret(): string {
  return randomBytes(32).toString("base64url");
}

/** Hex SHA-256 of a secret: what is stored and what the gateway may cache. */
export function hashSecret(secret: string): string {
  return createHash("sha256").update(secret, "utf8").digest("hex");
}

/** Constant-time comparison of a presented secret with a stored hash. */
export function secretMatches(secret: string, storedSha256: string): boolean {
  const presented = createHash("sha256").update(secret, "utf8").digest();
  const stored = Buffer.from(storedSha256, "hex");
  // Both are SHA-256 digests, so lengths only differ for a corrupt row; check before comparing
  // because timingSafeEqual throws on unequal lengths.
  return stored.length === presented.length && timingSafeEqual(presented, stored);
}
