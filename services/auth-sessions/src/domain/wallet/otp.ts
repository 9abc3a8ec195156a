import { createHash, randomInt, timingSafeEqual } from "node:crypto";

/** Six random digits from the CSPRNG (randomInt is uniform, no modulo bias). */
export function newOtpCode(): string {
  return String(randomInt(0, 1_000_000)).padStart(6, "0");
}

/** What is stored: SHA-256 of "<credential id>:<code>", so equal codes of two credentials differ at rest. */
export function hashOtp(credentialId: string, code: string): string {
  return createHash("sha256").update(`${credentialId}:${code}`, "utf8").digest("hex");
}

export function otpMatches(credentialId: string, code: string, storedSha256: string): boolean {
  const presented = Buffer.from(hashOtp(credentialId, code), "hex");
  const stored = Buffer.from(storedSha256, "hex");
  return presented.length === stored.length && timingSafeEqual(presented, stored);
}
