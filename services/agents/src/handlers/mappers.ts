import { create, fromBinary } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { errors, quoteRequestFields } from "@corridor/kit";
import {
  AgentActionSchema,
  AgentSchema,
  DeviceCodeSchema,
  PolicySchema,
  UsageSchema,
  type AgentAction,
  type Agent as AgentPb,
  type DeviceCode as DeviceCodePb,
  type Policy as PolicyPb,
  type PolicyPatch as PolicyPatchPb,
  type Usage as UsagePb,
} from "@corridor/proto/corridor/agents/v1/agent_pb.js";
import { PageInfoSchema, type PageInfo, type PageRequest as PageRequestPb, type TimeRange } from "@corridor/proto/corridor/common/v1/paging_pb.js";
import { TransactionSchema } from "@corridor/proto/corridor/ledger/v1/transaction_pb.js";
import { QuoteSchema } from "@corridor/proto/corridor/quotes_fx/v1/quote_pb.js";
import type { CreateQuoteRequest } from "@corridor/proto/corridor/quotes_fx/v1/quotes_fx_service_pb.js";
import type { DeviceCodeView } from "../domain/agents.js";
import type { Action, AgentWithUsage, Page, PageRequest, Policy, PolicyDraft, PolicyPatch, QuoteRequest, Usage } from "../domain/model.js";

/** Proto ↔ domain, and nothing else. Shared by the handler and the event producer. */

export const pageRequest = (p: PageRequestPb | undefined): PageRequest => ({ limit: p?.limit || undefined, cursor: p?.cursor || undefined });

export const pageInfo = (p: Page<unknown>): PageInfo => create(PageInfoSchema, { hasMore: p.hasMore, nextCursor: p.nextCursor ?? "", totalCount: BigInt(p.totalCount) });

export const timeRange = (r: TimeRange | undefined) => ({
  createdFrom: r?.after ? timestampDate(r.after) : undefined,
  createdTo: r?.before ? timestampDate(r.before) : undefined,
});

/** "" → undefined, for optional string filters. */
export const orUndefined = (s: string) => (s === "" ? undefined : s);

export function policyToPb(p: Policy): PolicyPb {
  return create(PolicySchema, {
    permissions: p.permissions,
    defaultExecutionMode: p.defaultExecutionMode,
    spendingLimits: p.spendingLimits ?? undefined,
    accountRestrictions: {
      allowedAccountIds: p.allowedAccountIds ?? [],
      hasAllowedAccountIds: p.allowedAccountIds !== null,
      accountRules: p.accountRules,
    },
    approvalThresholds: p.approvalThresholds ?? undefined,
  });
}

/** POST /agents' policy: what is unset takes the defaults (the domain fills them). */
export function policyDraftFromPb(p: PolicyPb | undefined): PolicyDraft {
  if (!p) return {};
  const r = p.accountRestrictions;
  return {
    permissions: p.permissions.length ? [...p.permissions] : undefined,
    defaultExecutionMode: p.defaultExecutionMode || undefined,
    spendingLimits: p.spendingLimits && {
      currency: p.spendingLimits.currency || undefined,
      perTransactionLimit: p.spendingLimits.perTransactionLimit,
      dailyLimit: p.spendingLimits.dailyLimit,
      dailyTransactionLimit: p.spendingLimits.dailyTransactionLimit,
      monthlyLimit: p.spendingLimits.monthlyLimit,
    },
    allowedAccountIds: r?.hasAllowedAccountIds ? [...r.allowedAccountIds] : undefined,
    accountRules: r?.accountRules.map((x) => ({ accountId: x.accountId, executionMode: x.executionMode, perTransactionLimit: x.perTransactionLimit })),
    approvalThresholds: p.approvalThresholds && { currency: p.approvalThresholds.currency, amount: p.approvalThresholds.amount },
  };
}

/** PATCH /agents/{id}/policy. A field set and cleared at once is a 400. */
export function policyPatchFromPb(p: PolicyPatchPb | undefined): PolicyPatch {
  if (!p) return {};
  const both = (field: string) => errors.invalidInput([{ field, reason: "cannot be set and removed in one request" }]);
  if (p.clearAllowedAccountIds && p.allowedAccountIds) throw both("accountRestrictions.allowedAccountIds");
  if (p.clearApprovalThresholds && p.approvalThresholds) throw both("approvalThresholds");
  const l = p.spendingLimits;
  return {
    permissions: p.permissions ? [...p.permissions.values] : undefined,
    defaultExecutionMode: p.defaultExecutionMode,
    spendingLimits: l && {
      currency: l.currency,
      perTransactionLimit: l.perTransactionLimit,
      dailyLimit: l.dailyLimit,
      dailyTransactionLimit: l.dailyTransactionLimit,
      monthlyLimit: l.monthlyLimit,
    },
    allowedAccountIds: p.clearAllowedAccountIds ? null : p.allowedAccountIds ? [...p.allowedAccountIds.values] : undefined,
    accountRules: p.accountRules?.values.map((x) => ({ accountId: x.accountId, executionMode: x.executionMode, perTransactionLimit: x.perTransactionLimit })),
    approvalThresholds: p.clearApprovalThresholds ? null : p.approvalThresholds ? { currency: p.approvalThresholds.currency, amount: p.approvalThresholds.amount } : undefined,
  };
}

const usageToPb = (u: Usage): UsagePb => create(UsageSchema, u);

export function agentToPb({ agent: a, usage }: AgentWithUsage): AgentPb {
  return create(AgentSchema, {
    id: a.id,
    platformId: a.platformId,
    customerId: a.customerId,
    name: a.name,
    isPaused: a.isPaused,
    isConnected: a.isConnected,
    policy: policyToPb(a.policy),
    usage: usage && usageToPb(usage),
    createdAt: timestampFromDate(a.createdAt),
    updatedAt: timestampFromDate(a.updatedAt),
  });
}

export function deviceCodeToPb(d: DeviceCodeView): DeviceCodePb {
  return create(DeviceCodeSchema, { code: d.code, agentId: d.agentId, expiresAt: timestampFromDate(d.expiresAt), redeemed: d.status === "REDEEMED", status: d.status });
}

/** The action as GET shows it: the quote (quote executions) and the transaction (once execution began) from their snapshots. */
export function actionToPb(a: Action): AgentAction {
  return create(AgentActionSchema, {
    id: a.id,
    platformId: a.platformId,
    agentId: a.agentId,
    customerId: a.customerId,
    platformCustomerId: a.platformCustomerId,
    status: a.status,
    type: a.type,
    createdAt: timestampFromDate(a.createdAt),
    updatedAt: timestampFromDate(a.updatedAt),
    quote: a.type === "EXECUTE_QUOTE" && a.quoteSnapshot ? fromBinary(QuoteSchema, a.quoteSnapshot) : undefined,
    transferDetails: { amount: a.amount, currency: a.currency, sourceAccountId: a.sourceAccountId, destinationAccountId: a.destinationAccountId },
    transaction: a.transactionId && a.transactionSnapshot ? fromBinary(TransactionSchema, a.transactionSnapshot) : undefined,
    rejectionReason: a.rejectionReason,
    failureReason: a.failureReason,
    failureMessage: a.failureMessage,
    expiresAt: a.expiresAt ? timestampFromDate(a.expiresAt) : undefined,
    countedAmount: a.countedAmount,
  });
}

/** POST /agents/me/quotes' body (platform_id and idempotency_key of the inner request are ignored). */
export function quoteRequestFromPb(q: CreateQuoteRequest | undefined): QuoteRequest {
  if (!q) throw errors.invalidInput([{ field: "quote", reason: "is required" }]);
  return quoteRequestFields(q);
}
