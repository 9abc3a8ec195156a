/**
 * An internal account's status (Grid's InternalAccount.status). Platform accounts are ACTIVE. A
 * customer's accounts follow the customer as the ledger's copy knows it: CLOSED once the customer is
 * closed or deleted, FROZEN while its verification is REJECTED (it can move no money), ACTIVE once
 * it is APPROVED, PENDING before (UNVERIFIED or PENDING: usable once verified). FAILED is in the
 * enum for accounts whose opening failed; opening is a local insert here, so none is ever FAILED.
 */
export type InternalAccountStatus = "PENDING" | "ACTIVE" | "CLOSED" | "FROZEN" | "FAILED";

export function customerAccountStatus(c: { closed: boolean; isDeleted: boolean; verificationStatus: string | null } | undefined): InternalAccountStatus {
  if (!c) return "PENDING";
  if (c.closed || c.isDeleted) return "CLOSED";
  if (c.verificationStatus === "REJECTED") return "FROZEN";
  if (c.verificationStatus === "APPROVED") return "ACTIVE";
  return "PENDING";
}
