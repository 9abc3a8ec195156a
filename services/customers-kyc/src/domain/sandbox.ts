import type { KycStatus } from "./types.js";

/**
 * The sandbox KYC/KYB rule (platform-api.md, Sandbox behaviour): the last three characters of
 * the identifier select the outcome — 001 PENDING, 002 REJECTED, anything else APPROVED.
 */
export function sandboxOutcome(identifier: string): Exclude<KycStatus, "UNVERIFIED"> {
  const suffix = identifier.trim().slice(-3);
  if (suffix === "001") return "PENDING";
  if (suffix === "002") return "REJECTED";
  return "APPROVED";
}
