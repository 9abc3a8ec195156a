/** Transaction lifecycle rules: which rail outcome moves a transaction where, and what it emits. */

export type TransactionType = "INCOMING" | "OUTGOING";
export type TransactionStatus = "CREATED" | "PENDING" | "PROCESSING" | "COMPLETED" | "REJECTED" | "FAILED" | "REFUNDED" | "EXPIRED";
export type RailStatus = "PROCESSING" | "COMPLETED" | "FAILED" | "REJECTED" | "RETURNED";

export const FINAL_STATUSES: ReadonlySet<string> = new Set(["COMPLETED", "REJECTED", "FAILED", "REFUNDED", "EXPIRED"]);

/**
 * failureReason of a failed transfer. The spec's enum is closed and OFFRAMP_FAILED is its only
 * rail-failure value, so a failed pull (an on-ramp) carries it too rather than a value clients
 * generated from the contract would not know; failureDetail says what the bank reported (see
 * README, "Transaction lifecycle").
 */
export const TRANSFER_FAILURE_REASON: Record<TransactionType, string> = { OUTGOING: "OFFRAMP_FAILED", INCOMING: "OFFRAMP_FAILED" };

/** failureDetail when the rail reports a bank rejection without a cause of its own. */
export const BANK_REJECTED = "BANK_REJECTED";

/** failureDetail when the rail reports a return without a cause of its own. */
export const RETURNED = "RETURNED";

export interface Transition {
  to: TransactionStatus;
  /**
   * What happens to the money. reverse-payout: a completed payout came back (rail clearing back to
   * the sender); reverse-pull: a completed pull was returned by the payer's bank (the credit is
   * taken back from the receiving account).
   */
  money: "none" | "capture-hold" | "release-hold" | "credit" | "reverse-payout" | "reverse-pull";
  eventType?: string;
  /** Set when the transfer ends FAILED. */
  failure?: { reason: string; detail: string };
}

/**
 * The next state for a rail outcome (`cause`: the rail's reason), or undefined when the outcome does
 * not apply (the transaction is already final, or the outcome would go backwards): replays and late
 * outcomes change nothing.
 */
export function transitionFor(type: TransactionType, current: string, outcome: RailStatus, cause = ""): Transition | undefined {
  if (outcome === "RETURNED") {
    // Rail contract v1 (docs/connectors.md): a return after COMPLETED reverses the money and the
    // transfer becomes FAILED (the spec's "an error occurred"; REFUNDED means "unable to complete
    // and refunded", and decisions §5 gives a transfer-out no REFUNDED status). A return that
    // overtakes the completion (or comes while in flight) is a failure: nothing had moved yet.
    const failure = { reason: TRANSFER_FAILURE_REASON[type], detail: cause || RETURNED };
    const eventType = type === "OUTGOING" ? "OUTGOING_PAYMENT_FAILED" : "INCOMING_PAYMENT_FAILED";
    if (current === "COMPLETED") return { to: "FAILED", money: type === "OUTGOING" ? "reverse-payout" : "reverse-pull", eventType, failure };
    if (FINAL_STATUSES.has(current)) return undefined;
    return { to: "FAILED", money: type === "OUTGOING" ? "release-hold" : "none", eventType, failure };
  }
  if (FINAL_STATUSES.has(current)) return undefined;
  if (outcome === "PROCESSING") {
    if (current !== "PENDING") return undefined;
    return { to: "PROCESSING", money: "none", eventType: type === "OUTGOING" ? "OUTGOING_PAYMENT_PROCESSING" : undefined };
  }
  if (outcome === "COMPLETED") {
    return type === "OUTGOING"
      ? { to: "COMPLETED", money: "capture-hold", eventType: "OUTGOING_PAYMENT_COMPLETED" }
      : { to: "COMPLETED", money: "credit", eventType: "INCOMING_PAYMENT_COMPLETED" };
  }
  // FAILED or REJECTED by the bank: the transfer is FAILED either way. decisions §5 gives OUTGOING no
  // REJECTED status, and an INCOMING transaction is REJECTED only when its receiver (the platform)
  // declines it (incoming UMA approval), never for a rail failure. The bank's rejection is kept as
  // the failureDetail. An outgoing payment's hold goes back to the sender; nothing moved yet for a pull.
  const failure = { reason: TRANSFER_FAILURE_REASON[type], detail: cause || (outcome === "REJECTED" ? BANK_REJECTED : "") };
  if (type === "OUTGOING") return { to: "FAILED", money: "release-hold", eventType: "OUTGOING_PAYMENT_FAILED", failure };
  return { to: "FAILED", money: "none", eventType: "INCOMING_PAYMENT_FAILED", failure };
}

export const createdEventType = (type: TransactionType) => (type === "OUTGOING" ? "OUTGOING_PAYMENT_PENDING" : "INCOMING_PAYMENT_PENDING");

export type TransactionDirection = "CREDIT" | "DEBIT";

/**
 * Whether a transaction credits or debits the customer's account (Grid's `direction`), from the
 * money's movement rather than from `type`: DEBIT when the internal account is the source (a
 * transfer-out, a quote paid from an internal account), CREDIT when money enters it (a transfer-in,
 * an incoming UMA payment, also when it is paid onward to a default deposit account), and DEBIT for
 * a real-time-funded quote (no internal account: the customer pays out from outside).
 */
export function directionOf(tx: { internal_account_id: string | null; source_account_id: string }): TransactionDirection {
  if (!tx.internal_account_id) return "DEBIT";
  return tx.internal_account_id === tx.source_account_id ? "DEBIT" : "CREDIT";
}

/**
 * Transaction.settledAt ("when the payment was or will be settled"): when it settled; while it is
 * in flight (PENDING or PROCESSING), the rail's estimate once one arrived with a rail outcome (the
 * sandbox's: its schedule for the account's suffix or the UMA scenario, on the platform's sandbox
 * clock); nothing for a payment that failed, was rejected or expired, or has no estimate yet.
 */
export function settledAtOf(tx: { status: string; settled_at: Date | null; expected_settlement_at?: Date | null }): Date | null {
  if (tx.settled_at) return tx.settled_at;
  if (tx.status === "PENDING" || tx.status === "PROCESSING") return tx.expected_settlement_at ?? null;
  return null;
}
