/** Transaction lifecycle rules: which rail outcome moves a transaction where, and what it emits. */

export type TransactionType = "INCOMING" | "OUTGOING";
export type TransactionStatus = "CREATED" | "PENDING" | "PROCESSING" | "COMPLETED" | "REJECTED" | "FAILED" | "REFUNDED" | "EXPIRED";
export type RailStatus = "PROCESSING" | "COMPLETED" | "FAILED" | "REJECTED";

export const FINAL_STATUSES: ReadonlySet<string> = new Set(["COMPLETED", "REJECTED", "FAILED", "REFUNDED", "EXPIRED"]);

/** The only failureReason of the spec's enum that names a rail failure. */
export const RAIL_FAILURE_REASON = "OFFRAMP_FAILED";

export interface Transition {
  to: TransactionStatus;
  /** What happens to the money. */
  money: "none" | "capture-hold" | "release-hold" | "credit";
  eventType?: string;
}

/**
 * The next state for a rail outcome, or undefined when the outcome does not apply (the transaction
 * is already final, or the outcome would go backwards): replays and late outcomes change nothing.
 */
export function transitionFor(type: TransactionType, current: string, outcome: RailStatus): Transition | undefined {
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
  // FAILED or REJECTED: an outgoing payment's hold goes back to the sender; nothing moved yet for a pull.
  if (type === "OUTGOING") {
    return { to: outcome === "REJECTED" ? "REJECTED" : "FAILED", money: "release-hold", eventType: "OUTGOING_PAYMENT_FAILED" };
  }
  return { to: "FAILED", money: "none", eventType: "INCOMING_PAYMENT_FAILED" };
}

export const createdEventType = (type: TransactionType) => (type === "OUTGOING" ? "OUTGOING_PAYMENT_PENDING" : "INCOMING_PAYMENT_PENDING");
