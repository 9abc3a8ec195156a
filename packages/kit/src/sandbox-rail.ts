/**
 * The sandbox's transfer table (spec "Sandbox behaviour", "Transfer in (and transfer out, same
 * patterns), external account number suffix"), shared by the sandbox rail simulator (which plays
 * the delayed outcomes) and the ledger's admission of a SANDBOX platform's transfer (which answers
 * the immediate failures with the request itself). Pure: identifier in, outcome out. Production
 * platforms never consult it.
 *
 *   002 insufficient funds, fails immediately; 003 account closed or invalid, fails immediately;
 *   004 the bank rejects the transfer; 005 stays pending about 30 s, then fails; any other succeeds.
 * Ours (the rail contract's return, docs/connectors.md): 006 completes, then the receiving bank
 * returns it SANDBOX_TRANSFER_RETURN_SECONDS later.
 */
export type SandboxTransferOutcome =
  /** The rail refuses the transfer before accepting it: the request is answered with it FAILED. */
  | { kind: "FAILS_IMMEDIATELY"; cause: "INSUFFICIENT_FUNDS" | "ACCOUNT_CLOSED_OR_INVALID" }
  /** Accepted (PROCESSING), then the bank rejects it. */
  | { kind: "BANK_REJECTS"; cause: "BANK_REJECTED" }
  /** Accepted (PROCESSING), then it fails after `afterSeconds` of sandbox time. */
  | { kind: "PENDING_THEN_FAILS"; afterSeconds: number; cause: "TIMED_OUT" }
  /** Completes, then comes back `afterSeconds` later (RETURNED after COMPLETED). */
  | { kind: "COMPLETES_THEN_RETURNED"; afterSeconds: number; cause: "RETURNED_BY_RECEIVING_BANK" }
  | { kind: "SUCCEEDS" };

/** Suffix 005: how long the transfer stays in flight before it fails. */
export const SANDBOX_PENDING_THEN_FAIL_SECONDS = 30;
/** Suffix 006: how long after completing the receiving bank returns the money. */
export const SANDBOX_TRANSFER_RETURN_SECONDS = 60;

export function sandboxTransferOutcome(identifier: string): SandboxTransferOutcome {
  switch (sandboxSuffixOf(identifier)) {
    case "002":
      return { kind: "FAILS_IMMEDIATELY", cause: "INSUFFICIENT_FUNDS" };
    case "003":
      return { kind: "FAILS_IMMEDIATELY", cause: "ACCOUNT_CLOSED_OR_INVALID" };
    case "004":
      return { kind: "BANK_REJECTS", cause: "BANK_REJECTED" };
    case "005":
      return { kind: "PENDING_THEN_FAILS", afterSeconds: SANDBOX_PENDING_THEN_FAIL_SECONDS, cause: "TIMED_OUT" };
    case "006":
      return { kind: "COMPLETES_THEN_RETURNED", afterSeconds: SANDBOX_TRANSFER_RETURN_SECONDS, cause: "RETURNED_BY_RECEIVING_BANK" };
    default:
      return { kind: "SUCCEEDS" };
  }
}

/** The last three characters; for identifiers with a domain part (PIX email key, lightning address), of the part before it. */
export function sandboxSuffixOf(identifier: string): string {
  const at = identifier.lastIndexOf("@");
  return (at >= 0 ? identifier.slice(0, at) : identifier).slice(-3);
}

/** The identifier of an external account's accountInfo whose suffix selects the outcome. */
export function sandboxIdentifierOf(info: Record<string, unknown> | undefined): string {
  if (!info) return "";
  for (const field of ["accountNumber", "iban", "clabe", "pixKey", "address", "lightningAddress", "invoice"]) {
    const v = info[field];
    if (typeof v === "string" && v) return v;
  }
  return "";
}
