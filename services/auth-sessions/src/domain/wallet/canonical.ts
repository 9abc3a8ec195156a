import { createHash } from "node:crypto";
import { canonicalJson as kitCanonicalJson } from "@corridor/kit";

/**
 * The canonical JSON (RFC 8785) of a payload a wallet signs, from the kit's one entry point: two
 * equal requests give the same bytes, so their SHA-256 compares. Only JSON values are accepted: a
 * non-finite number, an undefined outside an object member (where it is dropped) or a lone
 * surrogate throws rather than being written some other way, since the client rebuilds these bytes.
 */
export function canonicalJson(value: unknown): string {
  return kitCanonicalJson(value, { unrepresentable: "throw" });
}

export function sha256Hex(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}
