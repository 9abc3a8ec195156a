import { createHash } from "node:crypto";

/**
 * Canonical JSON (RFC 8785 for the values we sign: strings, integers, booleans, null, arrays and
 * objects): object keys sorted by UTF-16 code units, no whitespace, JSON.stringify's escaping and
 * number form (which is what RFC 8785 prescribes). Two equal requests give the same bytes, so
 * their SHA-256 compares.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") {
    if (typeof value === "number" && !Number.isFinite(value)) throw new Error("canonical JSON has no form for a non-finite number");
    if (value === undefined) throw new Error("canonical JSON has no form for undefined");
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
}

export function sha256Hex(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}
