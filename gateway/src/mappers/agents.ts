import type { MessageInitShape } from "@bufbuild/protobuf";
import type { PolicyPatchSchema, PolicySchema } from "@corridor/proto/corridor/agents/v1/agent_pb.js";
import type { Static } from "typebox";
import type { PolicyInput, PolicyPatchBody } from "../schemas/agents.js";

// The JSON -> proto direction of the agent routes. The proto -> JSON direction lives in
// @corridor/kit/rest-json (agentToJson, agentActionToJson, …), shared with notifications.
export { agentActionToJson, agentPolicyToJson, agentToJson, deviceCodeToJson } from "@corridor/kit/rest-json";

type PolicyJson = Static<typeof PolicyInput>;
type PolicyPatchJson = Static<typeof PolicyPatchBody>;
type RuleJson = NonNullable<NonNullable<PolicyJson["accountRestrictions"]>["accountRules"]>[number];

const int64 = (n: number | undefined) => BigInt(n ?? 0);
const optionalInt64 = (n: number | undefined) => (n === undefined ? undefined : BigInt(n));

function rulesToProto(rules: readonly RuleJson[]) {
  return rules.map((r) => ({ accountId: r.accountId, executionMode: r.executionMode ?? "", perTransactionLimit: int64(r.perTransactionLimit) }));
}

/** POST /agents: what is absent stays unset, and the agents service fills its defaults. */
export function policyToProto(p: PolicyJson | undefined): MessageInitShape<typeof PolicySchema> | undefined {
  if (!p) return undefined;
  const limits = p.spendingLimits;
  const restrictions = p.accountRestrictions;
  const allowed = restrictions?.allowedAccountIds;
  return {
    permissions: p.permissions ?? [],
    defaultExecutionMode: p.defaultExecutionMode ?? "",
    spendingLimits: limits
      ? {
          currency: limits.currency ?? "",
          perTransactionLimit: int64(limits.perTransactionLimit),
          dailyLimit: int64(limits.dailyLimit),
          dailyTransactionLimit: int64(limits.dailyTransactionLimit),
          monthlyLimit: int64(limits.monthlyLimit),
        }
      : undefined,
    accountRestrictions: restrictions
      ? { allowedAccountIds: allowed ?? [], hasAllowedAccountIds: Array.isArray(allowed), accountRules: rulesToProto(restrictions.accountRules ?? []) }
      : undefined,
    approvalThresholds: p.approvalThresholds ? { currency: p.approvalThresholds.currency, amount: int64(p.approvalThresholds.amount) } : undefined,
  };
}

/**
 * PATCH /agents/{id}/policy: a field the body does not name stays unset (kept by the service);
 * `accountRestrictions.allowedAccountIds: null` and `approvalThresholds: null` clear.
 */
export function policyPatchToProto(b: PolicyPatchJson): MessageInitShape<typeof PolicyPatchSchema> {
  const limits = b.spendingLimits;
  const allowed = b.accountRestrictions?.allowedAccountIds;
  const rules = b.accountRestrictions?.accountRules;
  return {
    permissions: b.permissions ? { values: b.permissions } : undefined,
    defaultExecutionMode: b.defaultExecutionMode,
    spendingLimits: limits
      ? {
          currency: limits.currency,
          perTransactionLimit: optionalInt64(limits.perTransactionLimit),
          dailyLimit: optionalInt64(limits.dailyLimit),
          dailyTransactionLimit: optionalInt64(limits.dailyTransactionLimit),
          monthlyLimit: optionalInt64(limits.monthlyLimit),
        }
      : undefined,
    allowedAccountIds: Array.isArray(allowed) ? { values: allowed } : undefined,
    clearAllowedAccountIds: allowed === null,
    accountRules: rules ? { values: rulesToProto(rules) } : undefined,
    approvalThresholds: b.approvalThresholds ? { currency: b.approvalThresholds.currency, amount: int64(b.approvalThresholds.amount) } : undefined,
    clearApprovalThresholds: b.approvalThresholds === null,
  };
}
