import { p256 } from "@noble/curves/nist.js";
import { normalizeCompressedPublicKey } from "./keys.js";

/** The only scheme a Service-Wallet-Signature may name (decisions §6). */
export const STAMP_SCHEME = "SIGNATURE_SCHEME_TK_API_P256";

export interface Stamp {
  /** Compressed P-256 public key, lower-case hex. */
  publicKey: string;
  /** DER ECDSA signature bytes. */
  signature: Uint8Array;
}

/**
 * Parses a Service-Wallet-Signature header: base64url (no padding) of JSON {publicKey, scheme,
 * signature}. Undefined when it is not one.
 */
export function parseStamp(header: string): Stamp | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(header)) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(header, "base64url").toString("utf8"));
  } catch {
    return undefined;
  }
  if (!parsed || typeof parsed !== "object") return undefined;
  const { publicKey, scheme, signature } = parsed as Record<string, unknown>;
  if (scheme !== STAMP_SCHEME || typeof publicKey !== "string" || typeof signature !== "string") return undefined;
  const key = normalizeCompressedPublicKey(publicKey);
  if (!key || !/^([0-9a-fA-F]{2})+$/.test(signature)) return undefined;
  return { publicKey: key, signature: Uint8Array.from(Buffer.from(signature, "hex")) };
}

/** ECDSA-SHA256 (DER) check of `payload`'s UTF-8 bytes against the stamp's key; high-S accepted, as WebCrypto signs. */
export function stampVerifies(stamp: Stamp, payload: string): boolean {
  try {
    return p256.verify(stamp.signature, new TextEncoder().encode(payload), Buffer.from(stamp.publicKey, "hex"), {
      format: "der",
      lowS: false,
    });
  } catch {
    return false;
  }
}
