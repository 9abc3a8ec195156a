import { v7 as uuidv7, validate as uuidValidate } from "uuid";

/** Record kinds; an id is `<Kind>:<uuidv7>` (time-ordered, so ids sort by creation). */
export type IdKind =
  | "AuthMethod" | "InternalAccount" | "ExternalAccount" | "Customer" | "Quote" | "Transaction"
  | "Agent" | "AgentAction" | "BeneficialOwner" | "PlatformConfig" | "Token" | "Platform"
  | "Session" | "Lookup" | "Verification" | "Webhook" | "Request" | "Event" | "JournalEntry"
  | "Invitation" | "DeviceCode" | "Deployment" | "KycLink" | "KycReview" | "Document" | "RailNotice"
  | "Reconciliation" | "ReconciliationBreak" | "Job"
  | "DelegatedKey" | "ScaChallenge" | "ScaFactorReset" | "LivenessCheck" | "OwnershipChallenge"
  | "Card" | "CardFundingSource";

export function newId(kind: IdKind): string {
  return `${kind}:${uuidv7()}`;
}

/** True when `value` is a well-formed id of that kind. */
export function isId(kind: IdKind, value: string): boolean {
  const prefix = `${kind}:`;
  return value.startsWith(prefix) && uuidValidate(value.slice(prefix.length));
}
