import type { SendOutcome } from "./delivery.js";

// Event webhooks (decisions §8): which event types become webhooks, and the retry policy. Plain TS.

const KYC_STATUSES = new Set(["APPROVED", "REJECTED", "PENDING"]);

const LEDGER_TYPES = new Set([
  "OUTGOING_PAYMENT_PENDING",
  "OUTGOING_PAYMENT_PROCESSING",
  "OUTGOING_PAYMENT_COMPLETED",
  "OUTGOING_PAYMENT_FAILED",
  "OUTGOING_PAYMENT_EXPIRED",
  "OUTGOING_PAYMENT_REFUND_PENDING",
  "OUTGOING_PAYMENT_REFUND_COMPLETED",
  "OUTGOING_PAYMENT_REFUND_FAILED",
  // INCOMING_PAYMENT_PENDING is deliberately absent: it is the synchronous approval exchange
  // (RequestIncomingPaymentApproval), and a platform-initiated transfer-in emits it too.
  "INCOMING_PAYMENT_COMPLETED",
  "INCOMING_PAYMENT_FAILED",
  "INTERNAL_ACCOUNT_BALANCE_UPDATED",
  // A receiving bank's notification of change corrected an external account (docs/events.md).
  "EXTERNAL_ACCOUNT_UPDATED",
  // A card's lifecycle state changed (Grid's CARD.STATE_CHANGE; docs/cards.md).
  "CARD_STATE_CHANGE",
]);

/** Whether a ledger event type is delivered as a webhook. */
export function isDeliveredLedgerType(type: string): boolean {
  return LEDGER_TYPES.has(type);
}

/**
 * Agent-action events delivered as webhooks: only the one the platform must act on. APPROVED,
 * REJECTED and FAILED are the platform's own decisions or visible on the action (GET /agents/approvals).
 */
const AGENT_TYPES = new Set(["AGENT_ACTION_PENDING_APPROVAL"]);

/** Whether an agents event type is delivered as a webhook. */
export function isDeliveredAgentType(type: string): boolean {
  return AGENT_TYPES.has(type);
}

/** CUSTOMER_{KYC|KYB}_<status> for the three statuses §8 lists; undefined for the others. */
export function customerStatusType(customerType: string, verificationStatus: string): string | undefined {
  if (!KYC_STATUSES.has(verificationStatus)) return undefined;
  return `CUSTOMER_${customerType === "BUSINESS" ? "KYB" : "KYC"}_${verificationStatus}`;
}

/** VERIFICATION_<STATUS> for any status. */
export function verificationType(status: string): string | undefined {
  return status ? `VERIFICATION_${status}` : undefined;
}

/** Only the claim of an invitation is a webhook. */
export function invitationType(status: string): string | undefined {
  return status === "CLAIMED" ? "INVITATION_CLAIMED" : undefined;
}

/** A finished bulk customer import: BULK_UPLOAD_COMPLETED or BULK_UPLOAD_FAILED (Grid's BULK_UPLOAD.*). */
export function bulkUploadType(status: string): string | undefined {
  return status === "COMPLETED" || status === "FAILED" ? `BULK_UPLOAD_${status}` : undefined;
}

export const FIRST_RETRY_MS = 30_000;
export const MAX_RETRY_MS = 30 * 60_000;
export const GIVE_UP_AFTER_MS = 7 * 24 * 60 * 60_000;
/** How soon a webhook waiting for its platform to configure an endpoint looks again. */
export const NO_ENDPOINT_RECHECK_MS = 60_000;

/** Delay before retry number `failedAttempts` (1 after the first failure): 30 s × 2^(n-1), at most 30 min. */
export function retryDelayMs(failedAttempts: number): number {
  const exp = Math.min(Math.max(failedAttempts - 1, 0), 20);
  return Math.min(FIRST_RETRY_MS * 2 ** exp, MAX_RETRY_MS);
}

export type AttemptVerdict =
  | { status: "DELIVERED" }
  | { status: "FAILED"; reason: string }
  | { status: "PENDING"; nextAttemptAt: Date; reason: string };

function describeOutcome(outcome: SendOutcome): string {
  return "status" in outcome ? `endpoint answered ${outcome.status}` : outcome.error;
}

/**
 * What follows an attempt: 2xx delivered; 409 is the platform saying "never again" (not retried);
 * anything else retried with backoff unless the next try would fall past 7 days after creation.
 */
export function judgeAttempt(outcome: SendOutcome, attempts: number, createdAt: Date, now: Date): AttemptVerdict {
  if ("status" in outcome && outcome.status >= 200 && outcome.status < 300) return { status: "DELIVERED" };
  if ("status" in outcome && outcome.status === 409) return { status: "FAILED", reason: "endpoint answered 409: not retried" };
  const next = new Date(now.getTime() + retryDelayMs(attempts));
  if (next.getTime() > createdAt.getTime() + GIVE_UP_AFTER_MS) {
    return { status: "FAILED", reason: `gave up after 7 days and ${attempts} attempts; last: ${describeOutcome(outcome)}` };
  }
  return { status: "PENDING", nextAttemptAt: next, reason: describeOutcome(outcome) };
}
