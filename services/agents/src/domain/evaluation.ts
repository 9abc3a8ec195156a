import { AppError, amountToJson } from "@corridor/kit";
import type { ExecutionMode, Policy } from "./model.js";
import type { UsageRow } from "./ports.js";

/**
 * Steps 4 and 5 of evaluating a submission (docs/agents.md): the limits against what live actions
 * reserved, then the execution mode. Pure: the caller runs it under the agent's row lock, with the
 * usage read in the same transaction.
 */

export interface Submission {
  /** The action's amount in the spending limits' currency (0 when the policy has none). */
  countedAmount: bigint;
  /** The action's amount in the approval thresholds' currency (0 when the policy has none). */
  thresholdAmount: bigint;
  /** Every account the action uses (internal and external). */
  accountIds: string[];
}

export type LimitName = "perTransactionLimit" | "dailyTransactionLimit" | "dailyLimit" | "monthlyLimit";

/** 403 SPENDING_LIMIT_EXCEEDED with the details docs/agents.md names. */
export function spendingLimitExceeded(d: { limit: LimitName; limitAmount: bigint; used: bigint; requested: bigint; currency: string; accountId?: string }): AppError {
  const what = d.limit === "dailyTransactionLimit" ? `${d.used} of ${d.limitAmount} actions today` : `${d.used} of ${d.limitAmount} ${d.currency} used`;
  return new AppError("FORBIDDEN", "SPENDING_LIMIT_EXCEEDED", `This action would exceed the agent's ${d.limit}${d.accountId ? ` for ${d.accountId}` : ""} (${what}, ${d.requested} requested)`, {
    limit: d.limit,
    limitAmount: amountToJson(d.limitAmount),
    used: amountToJson(d.used),
    requested: amountToJson(d.requested),
    currency: d.currency,
    ...(d.accountId ? { accountId: d.accountId } : {}),
  });
}

/** Throws the first limit the submission would pass, in the documented order. */
export function checkLimits(policy: Policy, usage: UsageRow, s: Submission): void {
  const l = policy.spendingLimits;
  if (!l) return;
  const amount = s.countedAmount;
  const over = (limitAmount: bigint, value: bigint) => limitAmount > 0n && value > limitAmount;
  if (over(l.perTransactionLimit, amount)) {
    throw spendingLimitExceeded({ limit: "perTransactionLimit", limitAmount: l.perTransactionLimit, used: 0n, requested: amount, currency: l.currency });
  }
  for (const rule of policy.accountRules) {
    if (s.accountIds.includes(rule.accountId) && over(rule.perTransactionLimit, amount)) {
      throw spendingLimitExceeded({ limit: "perTransactionLimit", limitAmount: rule.perTransactionLimit, used: 0n, requested: amount, currency: l.currency, accountId: rule.accountId });
    }
  }
  if (over(l.dailyTransactionLimit, usage.dayCount + 1n)) {
    throw spendingLimitExceeded({ limit: "dailyTransactionLimit", limitAmount: l.dailyTransactionLimit, used: usage.dayCount, requested: 1n, currency: l.currency });
  }
  if (over(l.dailyLimit, usage.dayAmount + amount)) {
    throw spendingLimitExceeded({ limit: "dailyLimit", limitAmount: l.dailyLimit, used: usage.dayAmount, requested: amount, currency: l.currency });
  }
  if (over(l.monthlyLimit, usage.monthAmount + amount)) {
    throw spendingLimitExceeded({ limit: "monthlyLimit", limitAmount: l.monthlyLimit, used: usage.monthAmount, requested: amount, currency: l.currency });
  }
}

/**
 * AUTO or APPROVAL_REQUIRED. An account rule that names a mode replaces the default for an action
 * using that account (APPROVAL_REQUIRED wins when the rules of two used accounts differ); an
 * amount above the approval threshold always needs approval.
 */
export function executionMode(policy: Policy, s: Submission): ExecutionMode {
  const t = policy.approvalThresholds;
  if (t && s.thresholdAmount > t.amount) return "APPROVAL_REQUIRED";
  const ruled = policy.accountRules.filter((r) => r.executionMode !== "" && s.accountIds.includes(r.accountId)).map((r) => r.executionMode);
  if (ruled.length === 0) return policy.defaultExecutionMode;
  return ruled.includes("APPROVAL_REQUIRED") ? "APPROVAL_REQUIRED" : "AUTO";
}
