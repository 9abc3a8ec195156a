import { errors, type FieldError } from "@corridor/kit";
import { parseUncompressedPublicKey } from "./keys.js";
import { CREDENTIAL_TYPES, type CredentialType } from "./types.js";

/** Input checks of the wallet-auth use cases; field names as in the public request bodies. */

const EMAIL = /^[^\s@]{1,64}@[^\s@]+\.[^\s@]+$/;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

export function credentialType(value: string, field = "type"): CredentialType {
  if (!(CREDENTIAL_TYPES as readonly string[]).includes(value)) {
    throw errors.invalidInput([{ field, reason: `must be one of ${CREDENTIAL_TYPES.join(", ")}` }]);
  }
  return value as CredentialType;
}

export function clientPublicKey(value: string, field = "clientPublicKey"): Uint8Array {
  if (!value) throw errors.invalidInput([{ field, reason: "is required" }]);
  const key = parseUncompressedPublicKey(value);
  if (!key) throw errors.invalidInput([{ field, reason: "must be an uncompressed P-256 public key: 130 hex characters starting with 04, on the curve" }]);
  return key;
}

export function email(value: string): string {
  const v = value.trim();
  if (v.length > 254 || !EMAIL.test(v)) throw errors.invalidInput([{ field: "email", reason: "must be an email address" }]);
  return v;
}

export function nickname(value: string): string {
  const v = value.trim();
  if (v.length < 1 || v.length > 255 || /[\u0000-\u001f\u007f]/.test(v)) {
    throw errors.invalidInput([{ field: "nickname", reason: "must be 1 to 255 characters without control characters" }]);
  }
  return v;
}

export function required(fields: Record<string, string | undefined>): void {
  const missing: FieldError[] = Object.entries(fields)
    .filter(([, v]) => !v)
    .map(([field]) => ({ field, reason: "is required" }));
  if (missing.length) throw errors.invalidInput(missing);
}

export function base64url(fields: Record<string, string>): void {
  const bad: FieldError[] = Object.entries(fields)
    .filter(([, v]) => !BASE64URL.test(v))
    .map(([field]) => ({ field, reason: "must be base64url" }));
  if (bad.length) throw errors.invalidInput(bad);
}
