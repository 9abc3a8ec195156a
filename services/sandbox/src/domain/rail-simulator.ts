/**
 * The sandbox rail: the outcome of a transfer by the last three characters of the external
 * account's identifier (spec "Transfer in (and transfer out, same patterns)"):
 *   002 insufficient funds, fails at once; 003 account closed or invalid, fails at once;
 *   004 the bank rejects it; 005 stays in flight (PROCESSING) ~30 s, then fails; anything else succeeds.
 * Ours (the rail contract's return, docs/connectors.md): 006 completes, then the receiving bank
 * returns it TRANSFER_RETURN_SECONDS later (RETURNED, reason RETURNED_BY_RECEIVING_BANK).
 */

export interface SimulatedStep {
  /** Seconds after the instruction (on the platform's sandbox clock). */
  afterSeconds: number;
  status: "PROCESSING" | "COMPLETED" | "FAILED" | "REJECTED" | "RETURNED" | "REFUND_COMPLETED" | "REFUND_FAILED" | "REFUNDED";
  reason: string;
}

export const PENDING_THEN_FAIL_SECONDS = 30;
/** Transfer suffix 006: how long after completing the receiving bank returns the money. */
export const TRANSFER_RETURN_SECONDS = 60;

export function simulateTransfer(identifier: string): SimulatedStep[] {
  switch (suffixOf(identifier)) {
    case "002":
      return [{ afterSeconds: 0, status: "FAILED", reason: "INSUFFICIENT_FUNDS" }];
    case "003":
      return [{ afterSeconds: 0, status: "FAILED", reason: "ACCOUNT_CLOSED" }];
    case "004":
      return [
        { afterSeconds: 0, status: "PROCESSING", reason: "" },
        { afterSeconds: 0, status: "REJECTED", reason: "BANK_REJECTED" },
      ];
    case "005":
      // Accepted by the rail (PROCESSING, so clients can see it is in flight), then it fails.
      return [
        { afterSeconds: 0, status: "PROCESSING", reason: "" },
        { afterSeconds: PENDING_THEN_FAIL_SECONDS, status: "FAILED", reason: "TIMED_OUT" },
      ];
    case "006":
      return [
        { afterSeconds: 0, status: "PROCESSING", reason: "" },
        { afterSeconds: 0, status: "COMPLETED", reason: "" },
        { afterSeconds: TRANSFER_RETURN_SECONDS, status: "RETURNED", reason: "RETURNED_BY_RECEIVING_BANK" },
      ];
    default:
      return [
        { afterSeconds: 0, status: "PROCESSING", reason: "" },
        { afterSeconds: 0, status: "COMPLETED", reason: "" },
      ];
  }
}

/** Quote suffix 003: the payout completes after about 6 minutes. */
export const QUOTE_SLOW_COMPLETION_SECONDS = 6 * 60;
/** Quote suffix 005: the receiving bank returns the completed payment this long after it completed. */
export const QUOTE_RETURN_SECONDS = 60;
/** UMA $pending.long.*: how long the payment stays PROCESSING before it completes. */
export const UMA_LONG_PENDING_SECONDS = 24 * 3600;

/**
 * The payout of an executed quote to an external account, by the account identifier's suffix
 * (spec "Quote to an external account destination"; 008, ours: REFUNDED at once). The ledger already moved the transaction to
 * PROCESSING when it executed the quote; a failure after the money left is followed by the refund's
 * outcome (the rail returns the money, or cannot).
 */
export function simulateQuotePayout(identifier: string): SimulatedStep[] {
  const at = (afterSeconds: number, status: SimulatedStep["status"], reason = ""): SimulatedStep => ({ afterSeconds, status, reason });
  switch (suffixOf(identifier)) {
    case "002":
      return [at(0, "FAILED", "EXECUTION_FAILED")];
    case "003":
      return [at(0, "PROCESSING"), at(QUOTE_SLOW_COMPLETION_SECONDS, "COMPLETED")];
    case "004":
      return [at(0, "FAILED", "COUNTERPARTY_DELIVERY_FAILED"), at(0, "REFUND_COMPLETED")];
    case "005":
      return [at(0, "COMPLETED"), at(QUOTE_RETURN_SECONDS, "RETURNED", "RETURNED_BY_RECEIVING_BANK"), at(QUOTE_RETURN_SECONDS, "REFUND_COMPLETED")];
    case "006":
      return [at(0, "FAILED", "USER_CANCELLED"), at(0, "REFUND_COMPLETED")];
    case "007":
      return [at(0, "FAILED", "PAYOUT_FAILED"), at(0, "REFUND_FAILED")];
    case "008":
      // Issue 10: the rail cannot complete the payout and hands the money straight back (REFUNDED).
      return [at(0, "REFUNDED", "PAYOUT_FAILED")];
    default:
      return [at(0, "COMPLETED")];
  }
}

/**
 * The payout of an executed quote to a UMA address, by its scenario (the part between `$` and the
 * currency): $success.* succeed, $pending.long.* complete after a day, $fail.compliance.* fail the
 * receiver's compliance check and are refunded. Other addresses succeed.
 */
export function simulateUmaPayout(umaAddress: string): SimulatedStep[] {
  const user = umaAddress.replace(/^\$/, "").split("@")[0]!.toLowerCase();
  if (user.startsWith("pending.long.")) return [{ afterSeconds: UMA_LONG_PENDING_SECONDS, status: "COMPLETED", reason: "" }];
  if (user.startsWith("fail.compliance.")) {
    return [
      { afterSeconds: 0, status: "FAILED", reason: "COMPLIANCE_FAILED" },
      { afterSeconds: 0, status: "REFUND_COMPLETED", reason: "" },
    ];
  }
  // Issue 10: the receiver's LNURLP endpoint fails, or it refuses the payment for missing payee data.
  if (user.startsWith("fail.lnurlp.")) {
    return [
      { afterSeconds: 0, status: "FAILED", reason: "LNURLP_FAILED" },
      { afterSeconds: 0, status: "REFUND_COMPLETED", reason: "" },
    ];
  }
  if (user.startsWith("fail.payeedata.")) {
    return [
      { afterSeconds: 0, status: "FAILED", reason: "MISSING_PAYEE_DATA" },
      { afterSeconds: 0, status: "REFUND_COMPLETED", reason: "" },
    ];
  }
  if (user.startsWith("refunded.")) return [{ afterSeconds: 0, status: "REFUNDED", reason: "PAYOUT_FAILED" }];
  return [{ afterSeconds: 0, status: "COMPLETED", reason: "" }];
}

/**
 * Seconds after the instruction at which a schedule reaches the payment's outcome: its first
 * COMPLETED, FAILED or REJECTED step (a later RETURNED or refund does not move the settlement).
 */
export function expectedOutcomeSeconds(steps: SimulatedStep[]): number {
  const outcome = steps.find((s) => s.status === "COMPLETED" || s.status === "FAILED" || s.status === "REJECTED" || s.status === "REFUNDED");
  return outcome?.afterSeconds ?? steps[steps.length - 1]?.afterSeconds ?? 0;
}

/** The steps of any instruction: quote payouts by their own tables, transfers by the transfer table. */
export function simulateInstruction(i: { kind: string; umaAddress: string; accountInfo?: Record<string, unknown> }): SimulatedStep[] {
  if (i.kind === "QUOTE_PAYOUT") return i.umaAddress ? simulateUmaPayout(i.umaAddress) : simulateQuotePayout(identifierOf(i.accountInfo));
  return simulateTransfer(identifierOf(i.accountInfo));
}

/** For identifiers with a domain part (PIX email key, lightning address): the part before it. */
export function suffixOf(identifier: string): string {
  const at = identifier.lastIndexOf("@");
  return (at >= 0 ? identifier.slice(0, at) : identifier).slice(-3);
}

/** The identifier of an accountInfo whose suffix selects the outcome. */
export function identifierOf(info: Record<string, unknown> | undefined): string {
  if (!info) return "";
  for (const field of ["accountNumber", "iban", "clabe", "pixKey", "address", "lightningAddress", "invoice"]) {
    const v = info[field];
    if (typeof v === "string" && v) return v;
  }
  return "";
}
