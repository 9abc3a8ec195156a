import { createHash, randomBytes, randomInt } from "node:crypto";

/**
 * Device codes and access tokens (docs/agents.md "Device codes and tokens"). Codes are typed by
 * people, so they use an alphabet without look-alikes; tokens are stored only as SHA-256.
 */

export const DEVICE_CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789";
const CODE_LENGTH = 8;
const VALID = new RegExp(`^[${DEVICE_CODE_ALPHABET}]{${CODE_LENGTH}}$`);

/** A new code, normalized (8 characters, no dash). */
export function newDeviceCode(): string {
  let code = "";
  for (let i = 0; i < CODE_LENGTH; i++) code += DEVICE_CODE_ALPHABET[randomInt(DEVICE_CODE_ALPHABET.length)];
  return code;
}

/** Case- and dash-insensitive; undefined for anything that cannot be a code. */
export function normalizeDeviceCode(input: string): string | undefined {
  if (input.length > 64) return undefined;
  const code = input.replace(/[-\s]/g, "").toUpperCase();
  return VALID.test(code) ? code : undefined;
}

/** ABCD-EFGH, as shown to people. */
export function displayDeviceCode(code: string): string {
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

/** `agt_` + 32 random bytes, base64url. Shown once; only its hash is kept. */
export function newAccessToken(): string {
  return `agt_${randomBytes(32).toString("base64url")}`;
}

export function hashAccessToken(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}
