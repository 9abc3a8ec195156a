/**
 * The agents service's records, in plain TypeScript (docs/agents.md). Money is bigint minor units;
 * times are Dates. Quotes and transactions belong to other services: the domain sees the facts it
 * decides on plus an opaque `snapshot` (their wire form) that it stores and hands back unread.
 */

import type { QuoteRequestFields } from "@corridor/kit";

export const PERMISSIONS = ["VIEW_TRANSACTIONS", "CREATE_QUOTES", "EXECUTE_QUOTES", "CREATE_TRANSFERS", "MANAGE_EXTERNAL_ACCOUNTS"] as const;
export type Permission = (typeof PERMISSIONS)[number];

export const EXECUTION_MODES = ["AUTO", "APPROVAL_REQUIRED"] as const;
export type ExecutionMode = (typeof EXECUTION_MODES)[number];

export interface SpendingLimits {
  currency: string;
  /** Each 0 means "no limit". */
  perTransactionLimit: bigint;
  dailyLimit: bigint;
  dailyTransactionLimit: bigint;
  monthlyLimit: bigint;
}

export interface AccountRule {
  accountId: string;
  /** Empty keeps the policy's default mode for this account. */
  executionMode: ExecutionMode | "";
  /** In the spending limits' currency (USD without spendingLimits); binds in every execution mode; 0 for none. */
  perTransactionLimit: bigint;
}

export interface ApprovalThresholds {
  currency: string;
  amount: bigint;
}

export interface Policy {
  permissions: Permission[];
  defaultExecutionMode: ExecutionMode;
  spendingLimits: SpendingLimits | null;
  /** null: every account of the customer; otherwise the only internal accounts it may use. */
  allowedAccountIds: string[] | null;
  accountRules: AccountRule[];
  approvalThresholds: ApprovalThresholds | null;
}

/** A policy as a caller sent it, before validation (strings as received; unset is undefined). */
export interface PolicyDraft {
  permissions?: string[];
  defaultExecutionMode?: string;
  spendingLimits?: { currency?: string; perTransactionLimit?: bigint; dailyLimit?: bigint; dailyTransactionLimit?: bigint; monthlyLimit?: bigint };
  allowedAccountIds?: string[];
  accountRules?: { accountId: string; executionMode: string; perTransactionLimit: bigint }[];
  approvalThresholds?: { currency: string; amount: bigint };
}

/** PATCH /agents/{id}/policy: undefined keeps a field; `null` removes it where the API allows. */
export interface PolicyPatch {
  permissions?: string[];
  defaultExecutionMode?: string;
  spendingLimits?: { currency?: string; perTransactionLimit?: bigint; dailyLimit?: bigint; dailyTransactionLimit?: bigint; monthlyLimit?: bigint };
  allowedAccountIds?: string[] | null;
  accountRules?: { accountId: string; executionMode: string; perTransactionLimit: bigint }[];
  approvalThresholds?: { currency: string; amount: bigint } | null;
}

export interface Agent {
  id: string;
  platformId: string;
  customerId: string;
  platformCustomerId: string;
  name: string;
  isPaused: boolean;
  isConnected: boolean;
  policy: Policy;
  deletedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** What the agent used of its limits in the current windows. */
export interface Usage {
  dailyTransactionCount: bigint;
  dailySpend: bigint;
  monthlySpend: bigint;
  /** YYYY-MM-DD: the next UTC date, when the daily counters start again. */
  dailyResetDate: string;
  /** YYYY-MM: the next month. */
  monthlyResetMonth: string;
}

export interface AgentWithUsage {
  agent: Agent;
  /** Absent where computing it would cost a call per request (AuthenticateAgent). */
  usage?: Usage;
}

export type DeviceCodeStatus = "PENDING" | "REDEEMED" | "EXPIRED" | "VOIDED";

export interface DeviceCode {
  /** Normalized: 8 characters of the alphabet, no dash. */
  code: string;
  platformId: string;
  agentId: string;
  expiresAt: Date;
  redeemedAt: Date | null;
  voidedAt: Date | null;
  createdAt: Date;
}

export type ActionType = "EXECUTE_QUOTE" | "TRANSFER_IN" | "TRANSFER_OUT";
export const ACTION_STATUSES = ["PENDING_APPROVAL", "APPROVED", "REJECTED", "FAILED"] as const;
export type ActionStatus = (typeof ACTION_STATUSES)[number];
export type ExecutionState = "NOT_STARTED" | "EXECUTING" | "EXECUTED";
export type FailureReason = "QUOTE_EXPIRED" | "INSUFFICIENT_BALANCE" | "EXECUTION_FAILED" | "AGENT_INACTIVE" | "POLICY_DENIED";

export interface Action {
  id: string;
  platformId: string;
  agentId: string;
  customerId: string;
  platformCustomerId: string;
  type: ActionType;
  status: ActionStatus;
  quoteId: string | null;
  /** Set once execution began (and for a transfer, once the ledger answered). */
  transactionId: string | null;
  /** The transfer as asked, or the quote's sending side. */
  amount: bigint;
  currency: string;
  sourceAccountId: string;
  destinationAccountId: string;
  description: string;
  /** Reserved against the window limits (spendingLimits' currency); 0 without spendingLimits. */
  countedAmount: bigint;
  dayKey: string;
  monthKey: string;
  executionState: ExecutionState;
  executionClaimedAt: Date | null;
  rejectionReason: string;
  failureReason: FailureReason | "";
  failureMessage: string;
  /** EXECUTE_QUOTE: when the quote, and so the approval, expires. */
  expiresAt: Date | null;
  /** The quote and transaction as last seen, in their wire form (opaque here). */
  quoteSnapshot: Uint8Array | null;
  transactionSnapshot: Uint8Array | null;
  createdAt: Date;
  updatedAt: Date;
}

/** A quote of quotes-fx, as far as the policy needs it. */
export interface QuoteFacts {
  id: string;
  status: string;
  agentId: string;
  sourceType: string;
  sourceAccountId: string;
  sourceCustomerId: string;
  destinationAccountId: string;
  sendingCurrency: string;
  receivingCurrency: string;
  totalSendingAmount: bigint;
  totalReceivingAmount: bigint;
  expiresAt: Date;
  transactionId: string;
  snapshot: Uint8Array;
}

/** A ledger transaction, as far as an action needs it. */
export interface TransactionFacts {
  id: string;
  status: string;
  agentId: string;
  failureReason: string;
  snapshot: Uint8Array;
}

/** POST /agents/me/quotes as the domain sees it (quotes-fx validates the rest). */
export type QuoteRequest = QuoteRequestFields;

/** One page of a keyset list. */
export interface Page<T> {
  data: T[];
  hasMore: boolean;
  nextCursor?: string;
  totalCount: number;
}

export interface PageRequest {
  limit?: number;
  cursor?: string;
}
