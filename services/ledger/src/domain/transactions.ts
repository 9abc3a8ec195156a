/** Transaction lifecycle rules: which rail outcome moves a transaction where, and what it emits. */

export type TransactionType = "INCOMING" | "OUTGOING";
export type TransactionStatus = "CREATED" | "PENDING_AUTHORIZATION" | "PENDING" | "PROCESSING" | "COMPLETED" | "REJECTED" | "FAILED" | "REFUNDED" | "EXPIRED";
export type RailStatus = "PROCESSING" | "COMPLETED" | "FAILED" | "REJECTED" | "RETURNED";

export const FINAL_STATUSES: ReadonlySet<string> = new Set(["COMPLETED", "REJECTED", "FAILED", "REFUNDED", "EXPIRED"]);

/**
 * failureReason of a failed transfer, by direction. A transfer-out is a payout to a bank (an
 * off-ramp): OFFRAMP_FAILED, from the spec's enum. A transfer-in is a pull from one (a collection,
 * not an off-ramp), for which the spec's enum has no value: it carries COLLECTION_FAILED, the
 * public Grid API's incoming failure reason for an inbound bank collection that failed (decisions:
 * Grid's name where the spec has none); Grid's generated clients know it. failureDetail says what
 * the bank reported (see README, "Transaction lifecycle").
 */
export const TRANSFER_FAILURE_REASON: Record<TransactionType, string> = { OUTGOING: "OFFRAMP_FAILED", INCOMING: "COLLECTION_FAILED" };

/** The webhook a transfer's failure sends, once. */
export const failedEventType = (type: TransactionType) => (type === "OUTGOING" ? "OUTGOING_PAYMENT_FAILED" : "INCOMING_PAYMENT_FAILED");

/** failureDetail when the rail reports a bank rejection without a cause of its own. */
export const BANK_REJECTED = "BANK_REJECTED";

/** failureDetail when the rail reports a return without a cause of its own. */
export const RETURNED = "RETURNED";

/**
 * A quote's transaction that waits for strong customer authentication (docs/sca.md): created in
 * this status when its quote waits, it holds nothing and carries no rail instruction, exactly as a
 * PENDING quote transaction before execution.
 */
export const PENDING_AUTHORIZATION = "PENDING_AUTHORIZATION";

/** What moves a quote transaction out of PENDING_AUTHORIZATION. */
export type AuthorizationEvent = "AUTHORIZED" | "EXPIRED" | "CANCELLED" | "EXECUTE";

/**
 * The state machine of PENDING_AUTHORIZATION: authorization moves it to PENDING (the quote can
 * then be executed or funded), the quote's expiry to EXPIRED, a cancellation to FAILED. It never
 * goes to PROCESSING directly: execution (and real-time funding) is refused while it waits. From
 * any other status the answer is undefined (nothing moves: a repeated authorization, an expiry
 * that came after the authorization, ...).
 */
export function authorizationTransition(current: string, event: AuthorizationEvent): "PENDING" | "EXPIRED" | "FAILED" | "REFUSED" | undefined {
  if (current !== PENDING_AUTHORIZATION) return undefined;
  switch (event) {
    case "AUTHORIZED":
      return "PENDING";
    case "EXPIRED":
      return "EXPIRED";
    case "CANCELLED":
      return "FAILED";
    case "EXECUTE":
      return "REFUSED";
  }
}

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
  if (type === "OUTGOING") return { to: "FAILED", money: "release-hold", eventType: failedEventType(type), failure };
  return { to: "FAILED", money: "none", eventType: failedEventType(type), failure };
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
 * in flight (PENDING_AUTHORIZATION, PENDING or PROCESSING), the rail's estimate once one arrived with a rail outcome (the
 * sandbox's: its schedule for the account's suffix or the UMA scenario, on the platform's sandbox
 * clock); nothing for a payment that failed, was rejected or expired, or has no estimate yet.
 */
export function settledAtOf(tx: { status: string; settled_at: Date | null; expected_settlement_at?: Date | null }): Date | null {
  if (tx.settled_at) return tx.settled_at;
  if (tx.status === "PENDING_AUTHORIZATION" || tx.status === "PENDING" || tx.status === "PROCESSING") return tx.expected_settlement_at ?? null;
  return null;
}

/**
 * Transaction.rateDetails (the spec's four service fields). A quote's transaction keeps what the
 * quote fixed. Every other movement the ledger makes (transfer-in, transfer-out, an incoming UMA
 * payment in its receiving currency, the onward payout of one) is same-currency and charges no
 * service fee today (fees 0, exchangeRate 1): its rate details are that fact, multiplier 1 and the
 * fees actually charged, zero; a fee on these would be recorded with the transaction and answered
 * from there. A receiver lookup's CREATED transaction has no rate yet (its quote brings one).
 * Decimal strings, as quotes-fx records them.
 */
export const SAME_CURRENCY_NO_FEE: Readonly<Record<string, string>> = Object.freeze({
  serviceApiMultiplier: "1",
  serviceApiFixedFee: "0",
  serviceApiVariableFeeRate: "0",
  serviceApiVariableFeeAmount: "0",
});

export function rateDetailsOf(tx: { rate_details: Record<string, unknown> | null; quote_id: string | null; lookup_id: string | null }): Record<string, unknown> | null {
  if (tx.rate_details) return tx.rate_details;
  if (tx.quote_id || tx.lookup_id) return null;
  return { ...SAME_CURRENCY_NO_FEE };
}
