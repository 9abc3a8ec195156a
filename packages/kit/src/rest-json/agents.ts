// Public JSON of a resource, shared by the gateway (its GET answers) and notifications (a
// webhook's data is the resource as its GET returns it, decisions §8). Pure: proto in, JSON out.
// Shapes: docs/agents.md "JSON shapes" and "Policy".
import type { Agent, AgentAction, DeviceCode, Policy, Usage } from "@corridor/proto/corridor/agents/v1/agent_pb.js";
import { quoteToJson } from "./quotes.js";
import { emptyToUndefined, isoFromTimestamp, numberFromInt64, optionalIso } from "./time.js";
import { transactionToJson } from "./transactions.js";

/**
 * The policy as the platform set it. `spendingLimits` and `approvalThresholds` are absent when
 * unset; `accountRestrictions.allowedAccountIds` is null when every account of the customer is
 * allowed (an empty array allows none).
 */
export function agentPolicyToJson(p: Policy | undefined) {
  const limits = p?.spendingLimits;
  const restrictions = p?.accountRestrictions;
  const thresholds = p?.approvalThresholds;
  return {
    permissions: [...(p?.permissions ?? [])],
    defaultExecutionMode: p?.defaultExecutionMode || "APPROVAL_REQUIRED",
    ...(limits
      ? {
          spendingLimits: {
            currency: limits.currency,
            perTransactionLimit: numberFromInt64(limits.perTransactionLimit),
            dailyLimit: numberFromInt64(limits.dailyLimit),
            dailyTransactionLimit: numberFromInt64(limits.dailyTransactionLimit),
            monthlyLimit: numberFromInt64(limits.monthlyLimit),
          },
        }
      : {}),
    accountRestrictions: {
      allowedAccountIds: restrictions?.hasAllowedAccountIds ? [...restrictions.allowedAccountIds] : null,
      accountRules: (restrictions?.accountRules ?? []).map((r) => ({
        accountId: r.accountId,
        ...(r.executionMode ? { executionMode: r.executionMode } : {}),
        perTransactionLimit: numberFromInt64(r.perTransactionLimit),
      })),
    },
    ...(thresholds ? { approvalThresholds: { currency: thresholds.currency, amount: numberFromInt64(thresholds.amount) } } : {}),
  };
}

export function agentUsageToJson(u: Usage | undefined) {
  return {
    dailyTransactionCount: numberFromInt64(u?.dailyTransactionCount ?? 0n),
    dailySpend: numberFromInt64(u?.dailySpend ?? 0n),
    monthlySpend: numberFromInt64(u?.monthlySpend ?? 0n),
    ...(u?.dailyResetDate ? { dailyResetDate: u.dailyResetDate } : {}),
    ...(u?.monthlyResetMonth ? { monthlyResetMonth: u.monthlyResetMonth } : {}),
  };
}

export function agentToJson(a: Agent | undefined) {
  if (!a) throw new Error("service answered without an agent");
  return {
    id: a.id,
    name: a.name,
    customerId: a.customerId,
    isPaused: a.isPaused,
    isConnected: a.isConnected,
    policy: agentPolicyToJson(a.policy),
    usage: agentUsageToJson(a.usage),
    createdAt: isoFromTimestamp(a.createdAt),
    updatedAt: isoFromTimestamp(a.updatedAt),
  };
}

/** `status` is PENDING, REDEEMED, EXPIRED or VOIDED. */
export function deviceCodeToJson(d: DeviceCode | undefined) {
  if (!d) throw new Error("service answered without a device code");
  return {
    code: d.code,
    agentId: d.agentId,
    ...(d.status ? { status: d.status } : {}),
    redeemed: d.redeemed,
    expiresAt: isoFromTimestamp(d.expiresAt),
  };
}

/**
 * The AgentAction. `quote` and `expiresAt` for EXECUTE_QUOTE; `transferDetails` for every type;
 * `transaction` once execution began; the reasons only when set.
 */
export function agentActionToJson(a: AgentAction | undefined) {
  if (!a) throw new Error("service answered without an agent action");
  const td = a.transferDetails;
  return {
    id: a.id,
    agentId: a.agentId,
    customerId: a.customerId,
    platformCustomerId: a.platformCustomerId,
    status: a.status,
    type: a.type,
    createdAt: isoFromTimestamp(a.createdAt),
    updatedAt: isoFromTimestamp(a.updatedAt),
    ...(a.quote ? { quote: quoteToJson(a.quote) } : {}),
    ...(td
      ? {
          transferDetails: {
            amount: numberFromInt64(td.amount),
            currency: td.currency,
            sourceAccountId: td.sourceAccountId,
            destinationAccountId: td.destinationAccountId,
          },
        }
      : {}),
    ...(a.transaction ? { transaction: transactionToJson(a.transaction) } : {}),
    ...(emptyToUndefined(a.rejectionReason) ? { rejectionReason: a.rejectionReason } : {}),
    ...(emptyToUndefined(a.failureReason) ? { failureReason: a.failureReason } : {}),
    ...(emptyToUndefined(a.failureMessage) ? { failureMessage: a.failureMessage } : {}),
    ...(a.expiresAt ? { expiresAt: optionalIso(a.expiresAt) } : {}),
  };
}
