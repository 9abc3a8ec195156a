import { AppError, amountToJson, formatAmount } from "@corridor/kit";
import type { ExecutionMode, Policy } from "./model.js";
import { DEFAULT_POLICY_CURRENCY } from "./policy.js";
import type { UsageRow } from "./ports.js";

/**
 * Steps 4 and 5 of evaluating a submission (docs/agents.md): the limits against what live actions
 * reserved, then the execution mode. Pure: the caller runs it under the agent's row lock, with the
 * usage read in the same transaction.
 */

export interface Submission {
  /** The action's amount in `countingCurrency` (0 when no limit binds it). */
  countedAmount: bigint;
  /** The action's amount in the approval thresholds' currency (0 when the policy has none). */
  thresholdAmount: bigint;
  /** Every account the action uses (internal and external). */
  accountIds: string[];
}

export type LimitName = "perTransactionLimit" | "dailyTransactionLimit" | "dailyLimit" | "monthlyLimit";

/** 403 SPENDING_LIMIT_EXCEEDED with the details docs/agents.md names. */
export function spendingLimitExceeded(d: { limit: LimitName; limitAmount: bigint; used: bigint; requested: bigint; currency: string; accountId?: string }): AppError {
  const count = d.limit === "dailyTransactionLimit";
  const what = count ? `${d.used} of ${d.limitAmount} actions today` : `${formatAmount(d.used, d.currency)} of ${formatAmount(d.limitAmount, d.currency)} used`;
  const requested = count ? `${d.requested}` : formatAmount(d.requested, d.currency);
  return new AppError("FORBIDDEN", "SPENDING_LIMIT_EXCEEDED", `This action would exceed the agent's ${d.limit}${d.accountId ? ` for ${d.accountId}` : ""} (${what}, ${requested} requested)`, {
    limit: d.limit,
    limitAmount: amountToJson(d.limitAmount),
    used: amountToJson(d.used),
    requested: amountToJson(d.requested),
    currency: d.currency,
    ...(d.accountId ? { accountId: d.accountId } : {}),
  });
}

/**
 * The currency the action's amount is counted in for the limits that bind it, or null when no
 * limit binds it (then nothing needs converting). `spendingLimits` bind every action, in their
 * currency; without them an account rule's perTransactionLimit still binds the actions that use
 * its account, counted in the policy's default currency (USD), as `spendingLimits` sent without
 * a currency would be. Every limit binds on its own: a rule's limit never depends on whether the
 * policy also has `spendingLimits` (docs/agents.md "How each limit binds").
 */
export function countingCurrency(policy: Policy, accountIds: readonly string[]): string | null {
  if (policy.spendingLimits) return policy.spendingLimits.currency;
  return policy.accountRules.some((r) => r.perTransactionLimit > 0n && accountIds.includes(r.accountId)) ? DEFAULT_POLICY_CURRENCY : null;
}

/** What an action reserves in its usage windows: its counted amount in the spending limits' currency, 0 without spendingLimits. */
export function reservedAmount(policy: Policy, countedAmount: bigint): bigint {
  return policy.spendingLimits ? countedAmount : 0n;
}

/**
 * Throws the first limit the submission would pass, in the documented order. `usage` is what the
 * other live actions reserved in the action's windows. Each limit is checked on its own: the
 * policy's perTransactionLimit, every account rule's perTransactionLimit for an account the action
 * uses (whatever the rule's or the policy's execution mode), then the daily count, daily and
 * monthly sums. `countedAmount` is in `countingCurrency(policy, accountIds)`.
 */
export function checkLimits(policy: Policy, usage: UsageRow, s: Submission): void {
  const currency = countingCurrency(policy, s.accountIds);
  if (currency === null) return;
  const l = policy.spendingLimits;
  const amount = s.countedAmount;
  const over = (limitAmount: bigint, value: bigint) => limitAmount > 0n && value > limitAmount;
  if (l && over(l.perTransactionLimit, amount)) {
    throw spendingLimitExceeded({ limit: "perTransactionLimit", limitAmount: l.perTransactionLimit, used: 0n, requested: amount, currency });
  }
  for (const rule of policy.accountRules) {
    if (s.accountIds.includes(rule.accountId) && over(rule.perTransactionLimit, amount)) {
      throw spendingLimitExceeded({ limit: "perTransactionLimit", limitAmount: rule.perTransactionLimit, used: 0n, requested: amount, currency, accountId: rule.accountId });
    }
  }
  if (!l) return;
  if (over(l.dailyTransactionLimit, usage.dayCount + 1n)) {
    throw spendingLimitExceeded({ limit: "dailyTransactionLimit", limitAmount: l.dailyTransactionLimit, used: usage.dayCount, requested: 1n, currency });
  }
  if (over(l.dailyLimit, usage.dayAmount + amount)) {
    throw spendingLimitExceeded({ limit: "dailyLimit", limitAmount: l.dailyLimit, used: usage.dayAmount, requested: amount, currency });
  }
  if (over(l.monthlyLimit, usage.monthAmount + amount)) {
    throw spendingLimitExceeded({ limit: "monthlyLimit", limitAmount: l.monthlyLimit, used: usage.monthAmount, requested: amount, currency });
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
