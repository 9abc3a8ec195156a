/**
 * Quote transactions: input rules, the journal of an execution (FX and fee legs) and what each
 * rail outcome of a QUOTE_PAYOUT does. Plain TS: the use cases in app/quotes.ts apply it.
 */
import type { FieldError } from "@corridor/kit";
import type { Posting } from "./journal.js";

export type RefundStatus = "PENDING" | "COMPLETED" | "FAILED";

const RATE = /^(?:0|[1-9]\d{0,17})(?:\.\d{1,18})?$/;
const UMA = /^\$[^\s@$]{1,64}@[A-Za-z0-9.-]{1,255}$/;
const CODE = /^[A-Z]{3,5}$/;

export interface QuoteAmounts {
  sendingCurrency: string;
  totalSendingAmount: bigint;
  receivingCurrency: string;
  totalReceivingAmount: bigint;
  feesIncluded: bigint;
  exchangeRate: string;
}

/** Field errors of a quote's amounts and rate (empty when valid). */
export function checkQuoteAmounts(q: QuoteAmounts, maxAmount: bigint): FieldError[] {
  const out: FieldError[] = [];
  if (!CODE.test(q.sendingCurrency)) out.push({ field: "sendingCurrency", reason: "must be an ISO 4217 or asset code" });
  if (!CODE.test(q.receivingCurrency)) out.push({ field: "receivingCurrency", reason: "must be an ISO 4217 or asset code" });
  if (q.totalSendingAmount < 1n || q.totalSendingAmount > maxAmount) out.push({ field: "totalSendingAmount", reason: `must be an integer from 1 to ${maxAmount}` });
  if (q.totalReceivingAmount < 1n || q.totalReceivingAmount > maxAmount) out.push({ field: "totalReceivingAmount", reason: `must be an integer from 1 to ${maxAmount}` });
  if (q.feesIncluded < 0n || q.feesIncluded >= q.totalSendingAmount) out.push({ field: "feesIncluded", reason: "must be at least 0 and below totalSendingAmount" });
  if (!RATE.test(q.exchangeRate) || !/[1-9]/.test(q.exchangeRate)) out.push({ field: "exchangeRate", reason: "must be a positive decimal string" });
  return out;
}

export const isUmaAddress = (s: string) => UMA.test(s);

/** The accounts an execution moves money through. `source` is the payer: an internal account, or the sandbox funding account. */
export interface ExecutionAccounts {
  source: string;
  feeRevenue: string;
  fxPoolSending: string;
  fxPoolReceiving: string;
  railClearing: string;
}

/**
 * One entry, balanced per currency: in the sending currency the payer pays the total, the fee goes
 * to fee revenue and the rest to the FX pool; in the receiving currency the FX pool pays the
 * receiving amount into rail clearing (handed to the rail). Zero legs are left out.
 */
export function executionPostings(a: ExecutionAccounts, q: Pick<QuoteAmounts, "totalSendingAmount" | "totalReceivingAmount" | "feesIncluded">): Posting[] {
  const net = q.totalSendingAmount - q.feesIncluded;
  return [
    { accountId: a.source, amount: -q.totalSendingAmount },
    { accountId: a.feeRevenue, amount: q.feesIncluded },
    { accountId: a.fxPoolSending, amount: net },
    { accountId: a.fxPoolReceiving, amount: -q.totalReceivingAmount },
    { accountId: a.railClearing, amount: q.totalReceivingAmount },
  ].filter((p) => p.amount !== 0n);
}

/** The exact opposite of the execution: everything the payer paid (fee included) goes back at the quote's rate. */
export function reversalPostings(a: ExecutionAccounts, q: Pick<QuoteAmounts, "totalSendingAmount" | "totalReceivingAmount" | "feesIncluded">): Posting[] {
  return executionPostings(a, q).map((p) => ({ accountId: p.accountId, amount: -p.amount }));
}

/** The payout money is neither delivered nor back: it moves from rail clearing to refund suspense. */
export function suspensePostings(a: { railClearing: string; refundSuspense: string }, received: bigint): Posting[] {
  return [
    { accountId: a.railClearing, amount: -received },
    { accountId: a.refundSuspense, amount: received },
  ];
}

/** The spec enum's failureReason for a QUOTE_PAYOUT failure cause. */
export function quoteFailureReason(cause: string): string {
  if (cause === "EXECUTION_FAILED") return "QUOTE_EXECUTION_FAILED";
  if (cause === "COMPLIANCE_FAILED") return "PAY_REQUEST_FAILED";
  if (cause === "LNURLP_FAILED") return "LNURLP_FAILED";
  if (cause === "MISSING_PAYEE_DATA") return "MISSING_MANDATORY_PAYEE_DATA";
  return "OFFRAMP_FAILED";
}

export interface QuoteState {
  status: string;
  refundStatus: RefundStatus | null;
}

export type QuoteOutcomeStatus = "PROCESSING" | "COMPLETED" | "FAILED" | "REJECTED" | "RETURNED" | "REFUND_COMPLETED" | "REFUND_FAILED" | "REFUNDED";

export type QuoteEffect =
  | { kind: "complete" }
  /** Failed before the money left: the execution is reversed at once, no refund. */
  | { kind: "fail-reverse"; failureReason: string }
  /** Failed (or returned) after the money left: a refund starts. */
  | { kind: "fail-refund"; failureReason: string }
  | { kind: "refund-complete" }
  | { kind: "refund-fail" }
  /** The rail could not complete the payout and handed the money back at once: REFUNDED, refund COMPLETED. */
  | { kind: "refunded"; failureReason: string };

/**
 * What a rail outcome does to an executed quote transaction, or undefined when it does not apply
 * (not executed yet, already there, late or repeated): replays change nothing.
 */
export function quoteOutcomeEffect(s: QuoteState, outcome: QuoteOutcomeStatus, cause: string): QuoteEffect | undefined {
  switch (outcome) {
    case "PROCESSING":
      return undefined; // execution already moved it to PROCESSING
    case "COMPLETED":
      return s.status === "PROCESSING" ? { kind: "complete" } : undefined;
    case "FAILED":
    case "REJECTED":
      if (s.status !== "PROCESSING") return undefined;
      return cause === "EXECUTION_FAILED" ? { kind: "fail-reverse", failureReason: quoteFailureReason(cause) } : { kind: "fail-refund", failureReason: quoteFailureReason(cause) };
    case "RETURNED":
      // The receiving bank sends a completed (or still processing) payment back.
      // A returned payment had left: it is refunded, so it never reads as an execution failure.
      if (s.status !== "COMPLETED" && s.status !== "PROCESSING") return undefined;
      return { kind: "fail-refund", failureReason: cause === "EXECUTION_FAILED" ? "OFFRAMP_FAILED" : quoteFailureReason(cause) };
    case "REFUND_COMPLETED":
      return s.refundStatus === "PENDING" ? { kind: "refund-complete" } : undefined;
    case "REFUND_FAILED":
      return s.refundStatus === "PENDING" ? { kind: "refund-fail" } : undefined;
    case "REFUNDED":
      return s.status === "PROCESSING" ? { kind: "refunded", failureReason: quoteFailureReason(cause) } : undefined;
  }
}
