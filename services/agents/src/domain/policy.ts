import { MAX_AMOUNT, errors, findCurrency, isId, type FieldError } from "@corridor/kit";
import { EXECUTION_MODES, PERMISSIONS, type ExecutionMode, type Permission, type Policy, type PolicyDraft, type PolicyPatch } from "./model.js";
import type { AccountDirectory } from "./ports.js";

/**
 * Policies: defaults, validation and PATCH semantics (docs/agents.md "Policy"). Validation lists
 * every bad field at once (400 INVALID_INPUT naming each).
 */

/** Used when limits or thresholds arrive without a currency. */
export const DEFAULT_POLICY_CURRENCY = "USD";
const MAX_ACCOUNT_IDS = 100;

/** Safe by default: it may look, and everything else waits for the platform. */
export function defaultPolicy(): Policy {
  return {
    permissions: ["VIEW_TRANSACTIONS"],
    defaultExecutionMode: "APPROVAL_REQUIRED",
    spendingLimits: null,
    allowedAccountIds: null,
    accountRules: [],
    approvalThresholds: null,
  };
}

const isMode = (v: string): v is ExecutionMode => (EXECUTION_MODES as readonly string[]).includes(v);
const isPermission = (v: string): v is Permission => (PERMISSIONS as readonly string[]).includes(v);

function limit(value: bigint | undefined, field: string, errs: FieldError[]): bigint {
  const v = value ?? 0n;
  if (v < 0n || v > MAX_AMOUNT) errs.push({ field, reason: `must be an integer from 0 to ${MAX_AMOUNT}` });
  return v;
}

function currency(value: string | undefined, field: string, errs: FieldError[]): string {
  const code = value || DEFAULT_POLICY_CURRENCY;
  if (!findCurrency(code)) errs.push({ field, reason: "is not a supported currency code" });
  return code;
}

/** An account id the policy names, with the field that named it. */
interface AccountRef {
  id: string;
  field: string;
}

/**
 * A complete policy from what a caller sent: unset fields take the defaults. Answers the field
 * errors instead of throwing, with the well-formed account ids to check against the ledger.
 */
function checkPolicy(draft: PolicyDraft, prefix: string): { policy: Policy; errs: FieldError[]; accounts: AccountRef[] } {
  const errs: FieldError[] = [];
  const accounts: AccountRef[] = [];
  const base = defaultPolicy();

  const permissions: Permission[] = [];
  for (const [i, p] of (draft.permissions ?? base.permissions).entries()) {
    if (!isPermission(p)) errs.push({ field: `${prefix}permissions[${i}]`, reason: `must be one of ${PERMISSIONS.join(", ")}` });
    else if (!permissions.includes(p)) permissions.push(p);
  }

  let defaultExecutionMode = base.defaultExecutionMode;
  if (draft.defaultExecutionMode) {
    if (isMode(draft.defaultExecutionMode)) defaultExecutionMode = draft.defaultExecutionMode;
    else errs.push({ field: `${prefix}defaultExecutionMode`, reason: "must be AUTO or APPROVAL_REQUIRED" });
  }

  const l = draft.spendingLimits;
  const spendingLimits = l
    ? {
        currency: currency(l.currency, `${prefix}spendingLimits.currency`, errs),
        perTransactionLimit: limit(l.perTransactionLimit, `${prefix}spendingLimits.perTransactionLimit`, errs),
        dailyLimit: limit(l.dailyLimit, `${prefix}spendingLimits.dailyLimit`, errs),
        dailyTransactionLimit: limit(l.dailyTransactionLimit, `${prefix}spendingLimits.dailyTransactionLimit`, errs),
        monthlyLimit: limit(l.monthlyLimit, `${prefix}spendingLimits.monthlyLimit`, errs),
      }
    : null;

  let allowedAccountIds: string[] | null = null;
  if (draft.allowedAccountIds) {
    const field = `${prefix}accountRestrictions.allowedAccountIds`;
    if (draft.allowedAccountIds.length > MAX_ACCOUNT_IDS) errs.push({ field, reason: `must list at most ${MAX_ACCOUNT_IDS} accounts` });
    allowedAccountIds = [];
    for (const [i, id] of draft.allowedAccountIds.entries()) {
      if (!isId("InternalAccount", id)) errs.push({ field: `${field}[${i}]`, reason: "must be an InternalAccount id of the agent's customer" });
      else if (!allowedAccountIds.includes(id)) {
        allowedAccountIds.push(id);
        accounts.push({ id, field: `${field}[${i}]` });
      }
    }
  }

  const rulesField = `${prefix}accountRestrictions.accountRules`;
  const rules = draft.accountRules ?? [];
  if (rules.length > MAX_ACCOUNT_IDS) errs.push({ field: rulesField, reason: `must list at most ${MAX_ACCOUNT_IDS} rules` });
  const seen = new Set<string>();
  const accountRules = rules.map((r, i) => {
    if (!isId("InternalAccount", r.accountId) && !isId("ExternalAccount", r.accountId)) {
      errs.push({ field: `${rulesField}[${i}].accountId`, reason: "must be an InternalAccount or ExternalAccount id of the agent's customer" });
    } else if (seen.has(r.accountId)) {
      errs.push({ field: `${rulesField}[${i}].accountId`, reason: "has another rule already" });
    } else {
      accounts.push({ id: r.accountId, field: `${rulesField}[${i}].accountId` });
    }
    seen.add(r.accountId);
    let executionMode: ExecutionMode | "" = "";
    if (r.executionMode) {
      if (isMode(r.executionMode)) executionMode = r.executionMode;
      else errs.push({ field: `${rulesField}[${i}].executionMode`, reason: "must be AUTO or APPROVAL_REQUIRED" });
    }
    return { accountId: r.accountId, executionMode, perTransactionLimit: limit(r.perTransactionLimit, `${rulesField}[${i}].perTransactionLimit`, errs) };
  });

  const t = draft.approvalThresholds;
  const approvalThresholds = t
    ? { currency: currency(t.currency, `${prefix}approvalThresholds.currency`, errs), amount: limit(t.amount, `${prefix}approvalThresholds.amount`, errs) }
    : null;

  return { policy: { permissions, defaultExecutionMode, spendingLimits, allowedAccountIds, accountRules, approvalThresholds }, errs, accounts };
}

/**
 * The policy a caller asked for, validated whole: 400 INVALID_INPUT naming every bad field at
 * once, under `prefix` ("policy." on create, "" on patch). Account ids must be the customer's;
 * only ids `previous` did not name are asked about (an account deleted since must not block an
 * unrelated change). Calls the ledger: never inside a transaction.
 */
export async function resolvePolicy(
  draft: PolicyDraft,
  ctx: { prefix: string; previous?: Policy; platformId: string; customerId: string; accounts: AccountDirectory },
): Promise<Policy> {
  const { policy, errs, accounts } = checkPolicy(draft, ctx.prefix);
  const known = new Set([...(ctx.previous?.allowedAccountIds ?? []), ...(ctx.previous?.accountRules ?? []).map((r) => r.accountId)]);
  const owned = await Promise.all(
    accounts
      .filter((ref) => !known.has(ref.id))
      .map(async (ref): Promise<FieldError | undefined> => {
        const account = ref.id.startsWith("InternalAccount:")
          ? await ctx.accounts.internalAccount(ctx.platformId, ref.id)
          : await ctx.accounts.externalAccount(ctx.platformId, ref.id, ctx.customerId);
        return account && account.customerId === ctx.customerId ? undefined : { field: ref.field, reason: "is not an account of the agent's customer" };
      }),
  );
  errs.push(...owned.filter((e): e is FieldError => e !== undefined));
  if (errs.length) throw errors.invalidInput(errs);
  return policy;
}

/** The same without the ledger: for a policy whose accounts were verified already. */
export function validatePolicy(draft: PolicyDraft, prefix: string): Policy {
  const { policy, errs } = checkPolicy(draft, prefix);
  if (errs.length) throw errors.invalidInput(errs);
  return policy;
}

/** The policy a PATCH asks for: only the named fields change (`spendingLimits` field by field). */
export function patchedDraft(current: Policy, patch: PolicyPatch): PolicyDraft {
  const limits = current.spendingLimits;
  return {
    permissions: patch.permissions ?? current.permissions,
    defaultExecutionMode: patch.defaultExecutionMode ?? current.defaultExecutionMode,
    spendingLimits:
      patch.spendingLimits || limits
        ? {
            currency: patch.spendingLimits?.currency ?? limits?.currency,
            perTransactionLimit: patch.spendingLimits?.perTransactionLimit ?? limits?.perTransactionLimit,
            dailyLimit: patch.spendingLimits?.dailyLimit ?? limits?.dailyLimit,
            dailyTransactionLimit: patch.spendingLimits?.dailyTransactionLimit ?? limits?.dailyTransactionLimit,
            monthlyLimit: patch.spendingLimits?.monthlyLimit ?? limits?.monthlyLimit,
          }
        : undefined,
    allowedAccountIds: patch.allowedAccountIds === undefined ? current.allowedAccountIds ?? undefined : patch.allowedAccountIds ?? undefined,
    accountRules: patch.accountRules ?? current.accountRules,
    approvalThresholds: patch.approvalThresholds === undefined ? current.approvalThresholds ?? undefined : patch.approvalThresholds ?? undefined,
  };
}
