import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ALL_PERMISSIONS, expectPublicError, startHarness, transferOut, world, type Harness, type World } from "./harness.js";

// Issue 29, item 1: every limit of a policy binds on its own, whatever else the policy sets, for
// every action type and execution mode, at submission and again at approval.

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

const MODES = ["AUTO", "APPROVAL_REQUIRED"] as const;
const RULE_MODES = ["", "AUTO", "APPROVAL_REQUIRED"] as const;

async function usage(w: World) {
  return (await h.client.getAgent({ platformId: w.platformId, agentId: w.agentId })).agent!.usage!;
}

async function actionCount(w: World) {
  return (await h.client.listAgentActions({ platformId: w.platformId, agentId: w.agentId })).pageInfo!.totalCount;
}

const transferIn = (w: World, amount: bigint) =>
  h.client.submitTransfer({ platformId: w.platformId, agentId: w.agentId, direction: "IN", sourceAccountId: w.external, destinationAccountId: w.internal, amount });

function quoteExecution(w: World, amount: bigint) {
  const destination = h.newAccount(w.platformId, w.customerId, "EXTERNAL", "EUR");
  const quote = h.newQuote(w.platformId, w.agentId, w.customerId, { sourceAccountId: w.internal, destinationAccountId: destination, totalSendingAmount: amount });
  return h.client.submitQuoteExecution({ platformId: w.platformId, agentId: w.agentId, quoteId: quote.id });
}

const SUBMISSIONS = { "transfer-out": (w: World, a: bigint) => transferOut(h, w, a), "transfer-in": transferIn, "quote execution": quoteExecution };

describe("an account rule's perTransactionLimit binds on its own", () => {
  for (const defaultExecutionMode of MODES) {
    for (const executionMode of RULE_MODES) {
      for (const withLimits of [false, true]) {
        it(`default ${defaultExecutionMode}, rule mode ${executionMode || "(none)"}, ${withLimits ? "with" : "without"} spendingLimits: 6000 over a rule of 5000 is refused 403 for every action type, and records nothing`, async () => {
          const w = await world(h, { permissions: ALL_PERMISSIONS, defaultExecutionMode, ...(withLimits ? { spendingLimits: { currency: "USD", dailyLimit: 1_000_000n } } : {}) });
          await h.client.updateAgentPolicy({
            platformId: w.platformId,
            agentId: w.agentId,
            patch: { accountRules: { values: [{ accountId: w.internal, executionMode, perTransactionLimit: 5_000n }] } },
          });
          for (const [what, submit] of Object.entries(SUBMISSIONS)) {
            const before = await usage(w);
            const count = await actionCount(w);
            const err = await expectPublicError(submit(w, 6_000n), "FORBIDDEN", "SPENDING_LIMIT_EXCEEDED");
            expect(err.details, what).toEqual({ limit: "perTransactionLimit", limitAmount: 5_000, used: 0, requested: 6_000, currency: "USD", accountId: w.internal });
            expect(await usage(w), what).toEqual(before);
            expect(await actionCount(w), what).toBe(count);
            // At the limit it passes, in the mode the rule (else the default) says.
            const { action } = await submit(w, 5_000n);
            expect(action?.status, what).toBe((executionMode || defaultExecutionMode) === "AUTO" ? "APPROVED" : "PENDING_APPROVAL");
          }
        });
      }
    }
  }

  it("a rule's limit counts in USD without spendingLimits (at the current rate, rounded up) and in the spendingLimits' currency with them", async () => {
    const w = await world(h, { permissions: ALL_PERMISSIONS, defaultExecutionMode: "AUTO" });
    const eur = h.newAccount(w.platformId, w.customerId, "INTERNAL", "EUR");
    const eurExternal = h.newAccount(w.platformId, w.customerId, "EXTERNAL", "EUR");
    await h.client.updateAgentPolicy({ platformId: w.platformId, agentId: w.agentId, patch: { accountRules: { values: [{ accountId: eur, executionMode: "", perTransactionLimit: 1_000n }] } } });
    const out = (amount: bigint) => h.client.submitTransfer({ platformId: w.platformId, agentId: w.agentId, direction: "OUT", sourceAccountId: eur, destinationAccountId: eurExternal, amount });
    // 1_000 EUR cents at 0.9217 EUR per USD = 1_084.95 → 1_085 USD cents.
    const err = await expectPublicError(out(1_000n), "FORBIDDEN", "SPENDING_LIMIT_EXCEEDED");
    expect(err.details).toMatchObject({ limit: "perTransactionLimit", limitAmount: 1_000, requested: 1_085, currency: "USD", accountId: eur });
    expect((await out(921n)).action?.status).toBe("APPROVED");
    // An action that touches no ruled account needs no conversion and no limit binds it.
    expect((await transferOut(h, w, 1_000_000n)).action?.status).toBe("APPROVED");

    await h.client.updateAgentPolicy({ platformId: w.platformId, agentId: w.agentId, patch: { spendingLimits: { currency: "EUR" } } });
    expect((await out(1_000n)).action?.status).toBe("APPROVED");
    await expectPublicError(out(1_001n), "FORBIDDEN", "SPENDING_LIMIT_EXCEEDED");
  });

  it("the policy's perTransactionLimit and a rule's both bind: the lower one refuses", async () => {
    const w = await world(h, { permissions: ALL_PERMISSIONS, defaultExecutionMode: "AUTO", spendingLimits: { currency: "USD", perTransactionLimit: 3_000n } });
    await h.client.updateAgentPolicy({ platformId: w.platformId, agentId: w.agentId, patch: { accountRules: { values: [{ accountId: w.external, executionMode: "AUTO", perTransactionLimit: 5_000n }] } } });
    expect((await expectPublicError(transferOut(h, w, 4_000n), "FORBIDDEN", "SPENDING_LIMIT_EXCEEDED")).details).toMatchObject({ limit: "perTransactionLimit", limitAmount: 3_000 });
    await h.client.updateAgentPolicy({ platformId: w.platformId, agentId: w.agentId, patch: { spendingLimits: { perTransactionLimit: 9_000n } } });
    expect((await expectPublicError(transferOut(h, w, 6_000n), "FORBIDDEN", "SPENDING_LIMIT_EXCEEDED")).details).toMatchObject({ limitAmount: 5_000, accountId: w.external });
  });

  it("a threshold sends an action under an AUTO rule to approval, and the rule's limit still refuses above it", async () => {
    const w = await world(h, { permissions: ALL_PERMISSIONS, defaultExecutionMode: "AUTO", approvalThresholds: { currency: "USD", amount: 1_000n } });
    await h.client.updateAgentPolicy({ platformId: w.platformId, agentId: w.agentId, patch: { accountRules: { values: [{ accountId: w.internal, executionMode: "AUTO", perTransactionLimit: 5_000n }] } } });
    expect((await transferOut(h, w, 1_000n)).action?.status).toBe("APPROVED");
    expect((await transferOut(h, w, 1_001n)).action?.status).toBe("PENDING_APPROVAL");
    await expectPublicError(transferOut(h, w, 5_001n), "FORBIDDEN", "SPENDING_LIMIT_EXCEEDED");
  });
});

describe("a policy changed while a submission is evaluated", () => {
  it("a rule limit added between the submission's first read of the policy and its lock still refuses", async () => {
    const w = await world(h, { permissions: ALL_PERMISSIONS, defaultExecutionMode: "AUTO" });
    // The first read saw no limit (nothing to count); the patch lands before the row lock.
    h.behaviour.beforePlatformTime = async () => {
      await h.client.updateAgentPolicy({
        platformId: w.platformId,
        agentId: w.agentId,
        patch: { accountRules: { values: [{ accountId: w.internal, executionMode: "AUTO", perTransactionLimit: 5_000n }] } },
      });
    };
    const err = await expectPublicError(transferOut(h, w, 6_000n), "FORBIDDEN", "SPENDING_LIMIT_EXCEEDED");
    expect(err.details).toMatchObject({ limit: "perTransactionLimit", limitAmount: 5_000, requested: 6_000, accountId: w.internal });
    expect(await actionCount(w)).toBe(0n);
  });
});

describe("approval evaluates the action again under the policy as it is then", () => {
  const CAREFUL = { permissions: ALL_PERMISSIONS, defaultExecutionMode: "APPROVAL_REQUIRED" };

  async function pendingThenPatched(amount: bigint, policy: Record<string, unknown>, patch: (w: World) => Record<string, unknown>) {
    const w = await world(h, { ...CAREFUL, ...policy });
    const pending = (await transferOut(h, w, amount)).action!;
    expect(pending.status).toBe("PENDING_APPROVAL");
    await h.client.updateAgentPolicy({ platformId: w.platformId, agentId: w.agentId, patch: patch(w) });
    const transfers = h.calls.transfers.length;
    const decided = (await h.client.approveAction({ platformId: w.platformId, agentId: w.agentId, actionId: pending.id })).action!;
    return { w, decided, moved: h.calls.transfers.length - transfers };
  }

  it("a rule's perTransactionLimit added since submission: approve answers FAILED POLICY_DENIED naming it, moves nothing and gives the reservation back", async () => {
    const { w, decided, moved } = await pendingThenPatched(6_000n, { spendingLimits: { currency: "USD", dailyLimit: 100_000n } }, (w) => ({
      accountRules: { values: [{ accountId: w.internal, executionMode: "APPROVAL_REQUIRED", perTransactionLimit: 5_000n }] },
    }));
    expect(decided).toMatchObject({ status: "FAILED", failureReason: "POLICY_DENIED" });
    expect(decided.failureMessage).toContain("SPENDING_LIMIT_EXCEEDED");
    expect(decided.failureMessage).toContain(w.internal);
    expect(decided.transaction).toBeUndefined();
    expect(moved).toBe(0);
    expect(await usage(w)).toMatchObject({ dailyTransactionCount: 0n, dailySpend: 0n });
  });

  it("spendingLimits lowered since submission: the window sums count the other live actions plus this one", async () => {
    const w = await world(h, { ...CAREFUL, spendingLimits: { currency: "USD", dailyLimit: 10_000n } });
    const first = (await transferOut(h, w, 4_000n)).action!;
    const second = (await transferOut(h, w, 4_000n)).action!;
    await h.client.updateAgentPolicy({ platformId: w.platformId, agentId: w.agentId, patch: { spendingLimits: { dailyLimit: 5_000n } } });
    // 4_000 of others + 4_000 > 5_000: denied, and its reservation comes back ...
    const denied = (await h.client.approveAction({ platformId: w.platformId, agentId: w.agentId, actionId: first.id })).action!;
    expect(denied).toMatchObject({ status: "FAILED", failureReason: "POLICY_DENIED" });
    expect(denied.failureMessage).toContain("dailyLimit");
    // ... so the other now fits.
    expect((await h.client.approveAction({ platformId: w.platformId, agentId: w.agentId, actionId: second.id })).action?.status).toBe("APPROVED");
    expect(await usage(w)).toMatchObject({ dailyTransactionCount: 1n, dailySpend: 4_000n });
  });

  it("an account no longer allowed, or a permission withdrawn, since submission: approve answers FAILED POLICY_DENIED", async () => {
    const other = await pendingThenPatched(100n, {}, (w) => ({ allowedAccountIds: { values: [h.newAccount(w.platformId, w.customerId, "INTERNAL")] } }));
    expect(other.decided).toMatchObject({ status: "FAILED", failureReason: "POLICY_DENIED" });
    expect(other.decided.failureMessage).toContain("ACCOUNT_NOT_ALLOWED");
    const withdrawn = await pendingThenPatched(100n, {}, () => ({ permissions: { values: ["VIEW_TRANSACTIONS"] } }));
    expect(withdrawn.decided).toMatchObject({ status: "FAILED", failureReason: "POLICY_DENIED" });
    expect(withdrawn.moved).toBe(0);
  });

  it("spendingLimits added since submission: approval reserves the action's amount in them, so later submissions count it", async () => {
    const { w, decided } = await pendingThenPatched(3_000n, {}, () => ({ spendingLimits: { currency: "USD", dailyLimit: 5_000n } }));
    expect(decided.status).toBe("APPROVED");
    expect(await usage(w)).toMatchObject({ dailyTransactionCount: 1n, dailySpend: 3_000n });
    const err = await expectPublicError(transferOut(h, w, 2_001n), "FORBIDDEN", "SPENDING_LIMIT_EXCEEDED");
    expect(err.details).toMatchObject({ limit: "dailyLimit", used: 3_000 });
  });

  it("a policy that still allows the action approves it unchanged", async () => {
    const { decided, moved } = await pendingThenPatched(5_000n, { spendingLimits: { currency: "USD", perTransactionLimit: 5_000n, dailyLimit: 5_000n, dailyTransactionLimit: 1n } }, (w) => ({
      accountRules: { values: [{ accountId: w.internal, executionMode: "APPROVAL_REQUIRED", perTransactionLimit: 5_000n }] },
    }));
    expect(decided.status).toBe("APPROVED");
    expect(moved).toBe(1);
  });
});
