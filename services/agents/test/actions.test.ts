import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ALL_PERMISSIONS, expectPublicError, startHarness, transferOut, world, type Harness, type World } from "./harness.js";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});
beforeEach(() => {
  h.behaviour.executeError = undefined;
  h.behaviour.transferStatus = "PENDING";
  h.behaviour.beforeAnswer = undefined;
});

const AUTO = { permissions: ALL_PERMISSIONS, defaultExecutionMode: "AUTO" };
const CAREFUL = { permissions: ALL_PERMISSIONS, defaultExecutionMode: "APPROVAL_REQUIRED" };

async function usage(w: World) {
  return (await h.client.getAgent({ platformId: w.platformId, agentId: w.agentId })).agent!.usage!;
}

async function actionCount(w: World) {
  return (await h.client.listAgentActions({ platformId: w.platformId, agentId: w.agentId })).pageInfo!.totalCount;
}

async function eventTypes(actionId: string) {
  return (await h.events()).filter((e) => e.payload.value?.action?.id === actionId).map((e) => e.eventType);
}

describe("submitting transfers", () => {
  it("AUTO within limits: the transfer executes at once with the agent and its customer, and the action is APPROVED with its transaction", async () => {
    const w = await world(h, { ...AUTO, spendingLimits: { currency: "USD", dailyLimit: 10_000n } });
    const { action, replayed } = await transferOut(h, w, 2_500n);
    expect(replayed).toBe(false);
    expect(action).toMatchObject({ agentId: w.agentId, customerId: w.customerId, type: "TRANSFER_OUT", status: "APPROVED", countedAmount: 2_500n });
    expect(action!.transferDetails).toMatchObject({ amount: 2_500n, currency: "USD", sourceAccountId: w.internal, destinationAccountId: w.external });
    expect(action!.transaction).toMatchObject({ agentId: w.agentId, customerId: w.customerId, amount: 2_500n });
    const call = h.calls.transfers.at(-1)!;
    expect(call).toMatchObject({ direction: "OUT", agentId: w.agentId, customerId: w.customerId, idempotencyKey: `agent-action/${action!.id}` });
    expect(await usage(w)).toMatchObject({ dailyTransactionCount: 1n, dailySpend: 2_500n, monthlySpend: 2_500n });
    expect(await eventTypes(action!.id)).toEqual(["AGENT_ACTION_APPROVED"]);
  });

  it("transfer-in pulls from the customer's external account into its internal account", async () => {
    const w = await world(h, AUTO);
    const { action } = await h.client.submitTransfer({ platformId: w.platformId, agentId: w.agentId, direction: "IN", sourceAccountId: w.external, destinationAccountId: w.internal, amount: 100n });
    expect(action).toMatchObject({ type: "TRANSFER_IN", status: "APPROVED" });
    expect(h.calls.transfers.at(-1)).toMatchObject({ direction: "IN", sourceAccountId: w.external, destinationAccountId: w.internal });
  });

  it("refuses bad input with 400 naming each field, before anything is recorded", async () => {
    const w = await world(h, AUTO);
    const err = await expectPublicError(
      h.client.submitTransfer({ platformId: w.platformId, agentId: w.agentId, direction: "SIDEWAYS", sourceAccountId: "", destinationAccountId: w.external, amount: 0n }),
      "INVALID",
      "INVALID_INPUT",
    );
    expect(((err.details?.errors ?? []) as { field: string }[]).map((e) => e.field).sort()).toEqual(["amount", "direction", "source.accountId"]);
    await expectPublicError(transferOut(h, w, 9_000_000_000_000_001n), "INVALID", "INVALID_INPUT");
    const currencyless = h.newAccount(w.platformId, w.customerId, "EXTERNAL", "EUR");
    await expectPublicError(
      h.client.submitTransfer({ platformId: w.platformId, agentId: w.agentId, direction: "OUT", sourceAccountId: w.internal, destinationAccountId: currencyless, amount: 1n }),
      "INVALID",
      "CURRENCY_MISMATCH",
    );
    expect(await actionCount(w)).toBe(0n);
  });

  it("a paused agent gets 403 AGENT_PAUSED and an agent without the permission 403 FORBIDDEN naming it", async () => {
    const w = await world(h, { permissions: ["VIEW_TRANSACTIONS"], defaultExecutionMode: "AUTO" });
    const forbidden = await expectPublicError(transferOut(h, w, 1n), "FORBIDDEN", "FORBIDDEN");
    expect(forbidden.details).toMatchObject({ requiredPermission: "CREATE_TRANSFERS" });
    await h.client.updateAgentPolicy({ platformId: w.platformId, agentId: w.agentId, patch: { permissions: { values: ALL_PERMISSIONS } } });
    await h.client.updateAgent({ platformId: w.platformId, agentId: w.agentId, isPaused: true });
    await expectPublicError(transferOut(h, w, 1n), "FORBIDDEN", "AGENT_PAUSED");
    expect(await actionCount(w)).toBe(0n);
  });

  it("another customer's accounts are 404 to the agent, and accounts outside allowedAccountIds are 403 ACCOUNT_NOT_ALLOWED", async () => {
    const w = await world(h, AUTO);
    const other = h.newCustomer(w.platformId);
    const theirs = h.newAccount(w.platformId, other, "INTERNAL");
    const theirsExternal = h.newAccount(w.platformId, other, "EXTERNAL");
    await expectPublicError(
      h.client.submitTransfer({ platformId: w.platformId, agentId: w.agentId, direction: "OUT", sourceAccountId: theirs, destinationAccountId: w.external, amount: 1n }),
      "NOT_FOUND",
      "INTERNAL_ACCOUNT_NOT_FOUND",
    );
    await expectPublicError(
      h.client.submitTransfer({ platformId: w.platformId, agentId: w.agentId, direction: "OUT", sourceAccountId: w.internal, destinationAccountId: theirsExternal, amount: 1n }),
      "NOT_FOUND",
      "EXTERNAL_ACCOUNT_NOT_FOUND",
    );
    const second = h.newAccount(w.platformId, w.customerId, "INTERNAL");
    await h.client.updateAgentPolicy({ platformId: w.platformId, agentId: w.agentId, patch: { allowedAccountIds: { values: [second] } } });
    const refused = await expectPublicError(transferOut(h, w, 1n), "FORBIDDEN", "ACCOUNT_NOT_ALLOWED");
    expect(refused.details).toMatchObject({ accountId: w.internal });
    expect(await actionCount(w)).toBe(0n);
  });
});

describe("limits", () => {
  async function refusedWith(w: World, amount: bigint, details: Record<string, unknown>) {
    const before = await usage(w);
    const count = await actionCount(w);
    const events = (await h.events()).length;
    const err = await expectPublicError(transferOut(h, w, amount), "FORBIDDEN", "SPENDING_LIMIT_EXCEEDED");
    expect(err.details).toEqual({ currency: "USD", ...details });
    // Nothing recorded, nothing reserved, nothing published.
    expect(await usage(w)).toEqual(before);
    expect(await actionCount(w)).toBe(count);
    expect((await h.events()).length).toBe(events);
  }

  it("perTransactionLimit: one action above it is refused naming the limit", async () => {
    const w = await world(h, { ...AUTO, spendingLimits: { currency: "USD", perTransactionLimit: 1_000n } });
    await refusedWith(w, 1_001n, { limit: "perTransactionLimit", limitAmount: 1_000, used: 0, requested: 1_001 });
    expect((await transferOut(h, w, 1_000n)).action?.status).toBe("APPROVED");
  });

  it("an account rule's perTransactionLimit applies to actions using that account, and names it", async () => {
    const w = await world(h, AUTO);
    await h.client.updateAgentPolicy({
      platformId: w.platformId,
      agentId: w.agentId,
      patch: { spendingLimits: { currency: "USD" }, accountRules: { values: [{ accountId: w.external, perTransactionLimit: 50n }] } },
    });
    await refusedWith(w, 51n, { limit: "perTransactionLimit", limitAmount: 50, used: 0, requested: 51, accountId: w.external });
    const otherExternal = h.newAccount(w.platformId, w.customerId, "EXTERNAL");
    const ok = await h.client.submitTransfer({ platformId: w.platformId, agentId: w.agentId, direction: "OUT", sourceAccountId: w.internal, destinationAccountId: otherExternal, amount: 51n });
    expect(ok.action?.status).toBe("APPROVED");
  });

  it("dailyTransactionLimit counts actions, pending ones included", async () => {
    const w = await world(h, { ...CAREFUL, spendingLimits: { currency: "USD", dailyTransactionLimit: 2n } });
    await transferOut(h, w, 1n);
    await transferOut(h, w, 1n);
    await refusedWith(w, 1n, { limit: "dailyTransactionLimit", limitAmount: 2, used: 2, requested: 1 });
  });

  it("dailyLimit and monthlyLimit sum what live actions reserved", async () => {
    const w = await world(h, { ...AUTO, spendingLimits: { currency: "USD", dailyLimit: 1_500n, monthlyLimit: 2_000n } });
    await transferOut(h, w, 1_000n);
    await refusedWith(w, 600n, { limit: "dailyLimit", limitAmount: 1_500, used: 1_000, requested: 600 });
    await transferOut(h, w, 500n);
    h.clock.advance(24 * 3_600_000); // next day, same month
    expect(await usage(w)).toMatchObject({ dailyTransactionCount: 0n, dailySpend: 0n, monthlySpend: 1_500n });
    await refusedWith(w, 501n, { limit: "monthlyLimit", limitAmount: 2_000, used: 1_500, requested: 501 });
    expect((await transferOut(h, w, 500n)).action?.status).toBe("APPROVED");
  });

  it("windows roll over with the platform's clock: a new day resets the daily counters, a new month the monthly one", async () => {
    const platformId = h.newPlatform();
    h.sandboxOffsetMs.set(platformId, 0);
    const w = await world(h, { ...AUTO, spendingLimits: { currency: "USD", dailyTransactionLimit: 1n, monthlyLimit: 1_000n } }, { platformId });
    await transferOut(h, w, 600n);
    await expectPublicError(transferOut(h, w, 1n), "FORBIDDEN", "SPENDING_LIMIT_EXCEEDED");
    // Move the platform's sandbox clock (not the service clock) to the first second of next month.
    const now = h.platformNow(platformId);
    const nextMonth = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
    h.sandboxOffsetMs.set(platformId, nextMonth - h.clock.now().getTime());
    const u = await usage(w);
    expect(u).toMatchObject({ dailyTransactionCount: 0n, dailySpend: 0n, monthlySpend: 0n });
    expect(u.dailyResetDate).toBe(new Date(nextMonth + 86_400_000).toISOString().slice(0, 10));
    const { action } = await transferOut(h, w, 1_000n);
    expect(action?.status).toBe("APPROVED");
  });

  it("amounts in another currency count at the current rate, rounded up", async () => {
    const w = await world(h, { ...AUTO, spendingLimits: { currency: "EUR", dailyLimit: 1_000n } });
    // 1_000 USD cents at 1.0850 USD per EUR = 921.65 EUR cents → 922.
    const { action } = await transferOut(h, w, 1_000n);
    expect(action?.countedAmount).toBe(922n);
    const err = await expectPublicError(transferOut(h, w, 100n), "FORBIDDEN", "SPENDING_LIMIT_EXCEEDED");
    expect(err.details).toMatchObject({ limit: "dailyLimit", used: 922, requested: 93, currency: "EUR" });
  });
});

describe("execution modes and approvals", () => {
  it("an amount above the approval threshold waits for the platform; one at the threshold runs", async () => {
    const w = await world(h, { ...AUTO, approvalThresholds: { currency: "USD", amount: 500n } });
    expect((await transferOut(h, w, 500n)).action?.status).toBe("APPROVED");
    expect((await transferOut(h, w, 501n)).action?.status).toBe("PENDING_APPROVAL");
  });

  it("an account rule's mode replaces the default for actions using that account", async () => {
    const w = await world(h, AUTO);
    const watched = h.newAccount(w.platformId, w.customerId, "EXTERNAL");
    await h.client.updateAgentPolicy({ platformId: w.platformId, agentId: w.agentId, patch: { accountRules: { values: [{ accountId: watched, executionMode: "APPROVAL_REQUIRED" }] } } });
    const viaWatched = await h.client.submitTransfer({ platformId: w.platformId, agentId: w.agentId, direction: "OUT", sourceAccountId: w.internal, destinationAccountId: watched, amount: 1n });
    expect(viaWatched.action?.status).toBe("PENDING_APPROVAL");
    expect((await transferOut(h, w, 1n)).action?.status).toBe("APPROVED");

    const c = await world(h, CAREFUL);
    await h.client.updateAgentPolicy({ platformId: c.platformId, agentId: c.agentId, patch: { accountRules: { values: [{ accountId: c.external, executionMode: "AUTO" }] } } });
    expect((await transferOut(h, c, 1n)).action?.status).toBe("APPROVED");
  });

  it("APPROVAL_REQUIRED: the action waits without a transaction, is listed for approval, its event carries it, and approve executes it once", async () => {
    const w = await world(h, CAREFUL);
    const transfersBefore = h.calls.transfers.length;
    const pending = (await transferOut(h, w, 777n)).action!;
    expect(pending.status).toBe("PENDING_APPROVAL");
    expect(pending.transaction).toBeUndefined();
    expect(h.calls.transfers.length).toBe(transfersBefore);

    const listed = await h.client.listApprovals({ platformId: w.platformId, agentId: w.agentId });
    expect(listed.actions.map((a) => a.id)).toEqual([pending.id]);
    expect(listed.pageInfo?.totalCount).toBe(1n);
    const [event] = (await h.events()).filter((e) => e.payload.value?.action?.id === pending.id);
    expect(event).toMatchObject({ platformId: w.platformId, eventType: "AGENT_ACTION_PENDING_APPROVAL" });
    expect(event!.payload.value?.action).toMatchObject({ status: "PENDING_APPROVAL", agentId: w.agentId, transferDetails: { amount: 777n } });

    const approved = (await h.client.approveAction({ platformId: w.platformId, agentId: w.agentId, actionId: pending.id })).action!;
    expect(approved).toMatchObject({ status: "APPROVED", transaction: { agentId: w.agentId, amount: 777n } });
    expect(h.calls.transfers.length).toBe(transfersBefore + 1);
    const twice = await expectPublicError(h.client.approveAction({ platformId: w.platformId, agentId: w.agentId, actionId: pending.id }), "CONFLICT", "INVALID_STATE_TRANSITION");
    expect(twice.shouldNotRetry).toBe(true);
    await expectPublicError(h.client.rejectAction({ platformId: w.platformId, agentId: w.agentId, actionId: pending.id }), "CONFLICT", "INVALID_STATE_TRANSITION");
    expect((await h.client.listApprovals({ platformId: w.platformId, agentId: w.agentId })).actions).toEqual([]);
    expect(await eventTypes(pending.id)).toEqual(["AGENT_ACTION_PENDING_APPROVAL", "AGENT_ACTION_APPROVED"]);
  });

  it("reject moves nothing, keeps the reason, and gives the reservation back", async () => {
    const w = await world(h, { ...CAREFUL, spendingLimits: { currency: "USD", dailyLimit: 1_000n } });
    const pending = (await transferOut(h, w, 800n)).action!;
    expect(await usage(w)).toMatchObject({ dailyTransactionCount: 1n, dailySpend: 800n });
    const transfersBefore = h.calls.transfers.length;
    const rejected = (await h.client.rejectAction({ platformId: w.platformId, agentId: w.agentId, actionId: pending.id, reason: "not today" })).action!;
    expect(rejected).toMatchObject({ status: "REJECTED", rejectionReason: "not today" });
    expect(rejected.transaction).toBeUndefined();
    expect(h.calls.transfers.length).toBe(transfersBefore);
    expect(await usage(w)).toMatchObject({ dailyTransactionCount: 0n, dailySpend: 0n });
    await expectPublicError(h.client.approveAction({ platformId: w.platformId, agentId: w.agentId, actionId: pending.id }), "CONFLICT", "INVALID_STATE_TRANSITION");
    await expectPublicError(h.client.rejectAction({ platformId: w.platformId, agentId: w.agentId, actionId: pending.id, reason: "x".repeat(1_001) }), "INVALID", "INVALID_INPUT");
  });

  it("lists approvals across agents with customer, creation-range and order filters", async () => {
    const platformId = h.newPlatform();
    const a = await world(h, CAREFUL, { platformId });
    const b = await world(h, CAREFUL, { platformId });
    const first = (await transferOut(h, a, 1n)).action!;
    h.clock.advance(60_000);
    const second = (await transferOut(h, b, 1n)).action!;
    h.clock.advance(60_000);
    const third = (await transferOut(h, a, 1n)).action!;
    const ids = async (req: object) => (await h.client.listApprovals({ platformId, ...req })).actions.map((x) => x.id);
    expect(await ids({})).toEqual([third.id, second.id, first.id]);
    expect(await ids({ ascending: true })).toEqual([first.id, second.id, third.id]);
    expect(await ids({ customerId: b.customerId })).toEqual([second.id]);
    expect(await ids({ created: { after: second.createdAt, before: second.createdAt } })).toEqual([second.id]);
    const page = await h.client.listApprovals({ platformId, ascending: true, page: { limit: 2 } });
    expect(page.pageInfo).toMatchObject({ hasMore: true, totalCount: 3n });
    expect(await ids({ ascending: true, page: { limit: 2, cursor: page.pageInfo!.nextCursor } })).toEqual([third.id]);
  });
});

describe("failed executions", () => {
  it("a ledger refusal ends the action FAILED with the reason, gives the reservation back, and still answers the action", async () => {
    const w = await world(h, { ...AUTO, spendingLimits: { currency: "USD", dailyLimit: 1_000_000_000_000n } });
    h.accounts.get(w.internal)!.balance = 10n;
    const { action } = await transferOut(h, w, 11n);
    expect(action).toMatchObject({ status: "FAILED", failureReason: "INSUFFICIENT_BALANCE" });
    expect(action!.failureMessage).not.toBe("");
    expect(await usage(w)).toMatchObject({ dailyTransactionCount: 0n, dailySpend: 0n });
    expect(await eventTypes(action!.id)).toEqual(["AGENT_ACTION_APPROVED", "AGENT_ACTION_FAILED"]);
  });

  it("an execution that does not get through stays APPROVED, and the recovery worker finishes it with the same idempotency key", async () => {
    const w = await world(h, AUTO);
    h.behaviour.executeError = new Error("connect ECONNREFUSED");
    const { action } = await transferOut(h, w, 42n);
    expect(action?.status).toBe("APPROVED");
    expect(action?.transaction).toBeUndefined();
    h.behaviour.executeError = undefined;
    expect(await h.built.recovery.recoverStale(10)).toBe(0); // not stale yet
    h.clock.advance(31_000);
    expect(await h.built.recovery.recoverStale(10)).toBe(1);
    const after = (await h.client.getAgentAction({ platformId: w.platformId, agentId: w.agentId, actionId: action!.id })).action!;
    expect(after).toMatchObject({ status: "APPROVED", transaction: { amount: 42n } });
    const keys = h.calls.transfers.filter((c) => c.idempotencyKey === `agent-action/${action!.id}`);
    expect(keys).toHaveLength(2);
    expect(await h.built.recovery.recoverStale(10)).toBe(0);
  });

  it("a transaction of the agent that later fails (ledger event) fails its APPROVED action and gives the reservation back", async () => {
    const w = await world(h, { ...AUTO, spendingLimits: { currency: "USD", dailyLimit: 10_000n } });
    const { action } = await transferOut(h, w, 900n);
    const t = h.transactions.get(action!.transaction!.id)!;
    t.status = "PROCESSING";
    await h.ledgerEvent(w.platformId, t);
    expect((await h.client.getAgentAction({ platformId: w.platformId, agentId: w.agentId, actionId: action!.id })).action?.status).toBe("APPROVED");
    t.status = "FAILED";
    t.failureReason = "RAIL_REJECTED";
    await h.ledgerEvent(w.platformId, t);
    const failed = (await h.client.getAgentAction({ platformId: w.platformId, agentId: w.agentId, actionId: action!.id })).action!;
    expect(failed).toMatchObject({ status: "FAILED", failureReason: "EXECUTION_FAILED", transaction: { status: "FAILED" } });
    expect(failed.failureMessage).toContain("RAIL_REJECTED");
    expect(await usage(w)).toMatchObject({ dailyTransactionCount: 0n, dailySpend: 0n });
    // A later event changes nothing more.
    t.status = "REFUNDED";
    await h.ledgerEvent(w.platformId, t);
    expect(await eventTypes(action!.id)).toEqual(["AGENT_ACTION_APPROVED", "AGENT_ACTION_FAILED"]);
  });

  it("a failure event that overtakes the ledger's answer still fails the action when the answer is recorded", async () => {
    const w = await world(h, { ...AUTO, spendingLimits: { currency: "USD", dailyLimit: 10_000n } });
    // The ledger commits the transfer, its rail fails it at once, and that event is consumed
    // before our call returns: no action knows the transaction id yet.
    h.behaviour.beforeAnswer = async (t) => {
      t.status = "FAILED";
      t.failureReason = "RAIL_REJECTED";
      await h.ledgerEvent(w.platformId, t);
      t.status = "PENDING"; // the answer the ledger gave before the failure
    };
    const { action } = await transferOut(h, w, 70n);
    expect(action).toMatchObject({ status: "FAILED", failureReason: "EXECUTION_FAILED" });
    expect(await usage(w)).toMatchObject({ dailyTransactionCount: 0n, dailySpend: 0n });
    // The FAILED event carries the transaction as the early event showed it.
    const failed = (await h.events()).find((e) => e.payload.value?.action?.id === action!.id && e.eventType === "AGENT_ACTION_FAILED");
    expect(failed?.payload.value?.action?.transaction).toMatchObject({ id: action!.transaction!.id, status: "FAILED" });
  });
});

describe("quote executions", () => {
  async function quoteWorld(policy: Record<string, unknown>) {
    const w = await world(h, policy);
    const destination = h.newAccount(w.platformId, w.customerId, "EXTERNAL", "EUR");
    const quote = h.newQuote(w.platformId, w.agentId, w.customerId, { sourceAccountId: w.internal, destinationAccountId: destination, totalSendingAmount: 10_850n, totalReceivingAmount: 10_000n });
    return { w, quote };
  }

  it("AUTO: executing the agent's quote answers the action APPROVED with the quote and its transaction; a second submission is 409", async () => {
    const { w, quote } = await quoteWorld({ ...AUTO, spendingLimits: { currency: "USD", dailyLimit: 100_000n } });
    const { action } = await h.client.submitQuoteExecution({ platformId: w.platformId, agentId: w.agentId, quoteId: quote.id });
    expect(action).toMatchObject({ type: "EXECUTE_QUOTE", status: "APPROVED", countedAmount: 10_850n, quote: { id: quote.id, status: "PROCESSING" }, transaction: { id: quote.transactionId } });
    expect(action!.expiresAt).toBeDefined();
    await expectPublicError(h.client.submitQuoteExecution({ platformId: w.platformId, agentId: w.agentId, quoteId: quote.id }), "CONFLICT", "INVALID_STATE_TRANSITION");
  });

  it("counts a quote in its receiving currency at the quote's own rate when the policy is in that currency", async () => {
    const { w, quote } = await quoteWorld({ ...CAREFUL, spendingLimits: { currency: "EUR", perTransactionLimit: 10_000n } });
    const reads = h.calls.rateReads;
    const { action } = await h.client.submitQuoteExecution({ platformId: w.platformId, agentId: w.agentId, quoteId: quote.id });
    expect(action).toMatchObject({ status: "PENDING_APPROVAL", countedAmount: 10_000n });
    expect(action!.transaction).toBeUndefined();
    expect(h.calls.rateReads).toBe(reads);
  });

  it("approving after the quote expired (platform clock) answers the action FAILED QUOTE_EXPIRED with its reservation back", async () => {
    const { w, quote } = await quoteWorld({ ...CAREFUL, spendingLimits: { currency: "USD", dailyLimit: 100_000n } });
    const pending = (await h.client.submitQuoteExecution({ platformId: w.platformId, agentId: w.agentId, quoteId: quote.id })).action!;
    h.sandboxOffsetMs.set(w.platformId, 5 * 60_000);
    const executions = h.calls.quoteExecutions.length;
    const res = (await h.client.approveAction({ platformId: w.platformId, agentId: w.agentId, actionId: pending.id })).action!;
    expect(res).toMatchObject({ status: "FAILED", failureReason: "QUOTE_EXPIRED" });
    expect(h.calls.quoteExecutions.length).toBe(executions);
    expect(await usage(w)).toMatchObject({ dailyTransactionCount: 0n, dailySpend: 0n });
  });

  it("the expiry worker fails pending quote executions whose quote expired", async () => {
    const { w, quote } = await quoteWorld(CAREFUL);
    const pending = (await h.client.submitQuoteExecution({ platformId: w.platformId, agentId: w.agentId, quoteId: quote.id })).action!;
    await h.built.expiry.expireDue(100);
    expect((await h.client.getAgentAction({ platformId: w.platformId, agentId: w.agentId, actionId: pending.id })).action?.status).toBe("PENDING_APPROVAL");
    h.sandboxOffsetMs.set(w.platformId, 6 * 60_000);
    expect(await h.built.expiry.expireDue(100)).toBeGreaterThanOrEqual(1);
    const expired = (await h.client.getAgentAction({ platformId: w.platformId, agentId: w.agentId, actionId: pending.id })).action!;
    expect(expired).toMatchObject({ status: "FAILED", failureReason: "QUOTE_EXPIRED" });
    expect(await eventTypes(pending.id)).toEqual(["AGENT_ACTION_PENDING_APPROVAL", "AGENT_ACTION_FAILED"]);
  });

  it("only the agent's own PENDING, unexpired quotes can be submitted", async () => {
    const { w, quote } = await quoteWorld(AUTO);
    const other = await world(h, AUTO, { platformId: w.platformId });
    await expectPublicError(h.client.submitQuoteExecution({ platformId: w.platformId, agentId: other.agentId, quoteId: quote.id }), "NOT_FOUND", "QUOTE_NOT_FOUND");
    await expectPublicError(h.client.getAgentQuote({ platformId: w.platformId, agentId: other.agentId, quoteId: quote.id }), "NOT_FOUND", "QUOTE_NOT_FOUND");
    await expectPublicError(h.client.submitQuoteExecution({ platformId: w.platformId, agentId: w.agentId, quoteId: "Quote:bad" }), "NOT_FOUND", "QUOTE_NOT_FOUND");
    h.sandboxOffsetMs.set(w.platformId, 10 * 60_000);
    await expectPublicError(h.client.submitQuoteExecution({ platformId: w.platformId, agentId: w.agentId, quoteId: quote.id }), "CONFLICT", "QUOTE_EXPIRED");
  });

  it("CreateAgentQuote creates the quote for the agent's customer; immediatelyExecute submits it under the policy and answers it PROCESSING", async () => {
    const w = await world(h, AUTO);
    const destination = h.newAccount(w.platformId, w.customerId, "EXTERNAL", "EUR");
    const body = {
      source: { sourceType: "ACCOUNT", accountId: w.internal },
      destination: { destinationType: "ACCOUNT", accountId: destination, paymentRail: "SEPA" },
      lockedCurrencySide: "SENDING",
      lockedCurrencyAmount: 5_000n,
    };
    const plain = await h.client.createAgentQuote({ platformId: w.platformId, agentId: w.agentId, quote: body, idempotencyKey: "q-1" });
    expect(plain.quote).toMatchObject({ status: "PENDING", agentId: w.agentId, source: { customerId: w.customerId } });
    const replay = await h.client.createAgentQuote({ platformId: w.platformId, agentId: w.agentId, quote: body, idempotencyKey: "q-1" });
    expect(replay).toMatchObject({ replayed: true, quote: { id: plain.quote!.id } });

    const now = await h.client.createAgentQuote({ platformId: w.platformId, agentId: w.agentId, quote: { ...body, immediatelyExecute: true } });
    expect(now.quote?.status).toBe("PROCESSING");
    const actions = (await h.client.listAgentActions({ platformId: w.platformId, agentId: w.agentId })).actions;
    expect(actions.find((a) => a.quote?.id === now.quote!.id)?.status).toBe("APPROVED");

    const viewer = await world(h, { permissions: ["CREATE_QUOTES"], defaultExecutionMode: "AUTO" });
    const err = await expectPublicError(
      h.client.createAgentQuote({ platformId: viewer.platformId, agentId: viewer.agentId, quote: { ...body, source: { sourceType: "ACCOUNT", accountId: viewer.internal }, immediatelyExecute: true } }),
      "FORBIDDEN",
      "FORBIDDEN",
    );
    expect(err.details).toMatchObject({ requiredPermission: "EXECUTE_QUOTES" });
  });
});

describe("reads, isolation and idempotency", () => {
  it("another platform's agent and action ids are 404 everywhere and change nothing", async () => {
    const w = await world(h, CAREFUL);
    const pending = (await transferOut(h, w, 1n)).action!;
    const stranger = h.newPlatform();
    await expectPublicError(h.client.getAgentAction({ platformId: stranger, agentId: w.agentId, actionId: pending.id }), "NOT_FOUND", "AGENT_ACTION_NOT_FOUND");
    await expectPublicError(h.client.approveAction({ platformId: stranger, agentId: w.agentId, actionId: pending.id }), "NOT_FOUND", "AGENT_ACTION_NOT_FOUND");
    await expectPublicError(h.client.rejectAction({ platformId: stranger, agentId: w.agentId, actionId: pending.id }), "NOT_FOUND", "AGENT_ACTION_NOT_FOUND");
    await expectPublicError(h.client.approveAction({ platformId: w.platformId, agentId: w.agentId, actionId: "AgentAction:x" }), "NOT_FOUND", "AGENT_ACTION_NOT_FOUND");
    const otherAgent = await world(h, CAREFUL, { platformId: w.platformId });
    await expectPublicError(h.client.approveAction({ platformId: w.platformId, agentId: otherAgent.agentId, actionId: pending.id }), "NOT_FOUND", "AGENT_ACTION_NOT_FOUND");
    expect((await h.client.listApprovals({ platformId: stranger, agentId: w.agentId })).actions).toEqual([]);
    expect((await h.client.listAgentActions({ platformId: stranger, agentId: w.agentId })).actions).toEqual([]);
    await expectPublicError(transferOut(h, { ...w, platformId: stranger }, 1n), "NOT_FOUND", "AGENT_NOT_FOUND");
    expect((await h.client.getAgentAction({ platformId: w.platformId, agentId: w.agentId, actionId: pending.id })).action?.status).toBe("PENDING_APPROVAL");
  });

  it("lists an agent's actions newest first, filtered by status; an unknown status is 400", async () => {
    const w = await world(h, CAREFUL);
    const a = (await transferOut(h, w, 1n)).action!;
    h.clock.advance(1000);
    const b = (await transferOut(h, w, 2n)).action!;
    await h.client.rejectAction({ platformId: w.platformId, agentId: w.agentId, actionId: a.id });
    const all = await h.client.listAgentActions({ platformId: w.platformId, agentId: w.agentId });
    expect(all.actions.map((x) => x.id)).toEqual([b.id, a.id]);
    expect((await h.client.listAgentActions({ platformId: w.platformId, agentId: w.agentId, status: "REJECTED" })).actions.map((x) => x.id)).toEqual([a.id]);
    await expectPublicError(h.client.listAgentActions({ platformId: w.platformId, agentId: w.agentId, status: "MAYBE" }), "INVALID", "INVALID_INPUT");
  });

  it("an Idempotency-Key replays the first action (replayed) without a second transfer; another body with it is 422", async () => {
    const w = await world(h, { ...AUTO, spendingLimits: { currency: "USD", dailyTransactionLimit: 5n } });
    const first = await transferOut(h, w, 300n, "k-1");
    const transfers = h.calls.transfers.length;
    const again = await transferOut(h, w, 300n, "k-1");
    expect(again).toMatchObject({ replayed: true, action: { id: first.action!.id, status: "APPROVED" } });
    expect(h.calls.transfers.length).toBe(transfers);
    expect((await usage(w)).dailyTransactionCount).toBe(1n);
    await expectPublicError(transferOut(h, w, 301n, "k-1"), "UNPROCESSABLE", "IDEMPOTENCY_KEY_REUSED");
    // Keys are the agent's own: another agent of the platform may use the same key.
    const other = await world(h, AUTO, { platformId: w.platformId });
    expect((await transferOut(h, other, 300n, "k-1")).replayed).toBe(false);
    // A refused submission records nothing and frees its key.
    await h.client.updateAgentPolicy({ platformId: w.platformId, agentId: w.agentId, patch: { spendingLimits: { dailyTransactionLimit: 1n } } });
    await expectPublicError(transferOut(h, w, 5n, "k-2"), "FORBIDDEN", "SPENDING_LIMIT_EXCEEDED");
    await h.client.updateAgentPolicy({ platformId: w.platformId, agentId: w.agentId, patch: { spendingLimits: { dailyTransactionLimit: 0n } } });
    expect((await transferOut(h, w, 5n, "k-2")).replayed).toBe(false);
  });

  it("concurrent retries with one Idempotency-Key submit once: the others replay it or are told it is in flight", async () => {
    const w = await world(h, AUTO);
    const results = await Promise.allSettled(Array.from({ length: 6 }, () => transferOut(h, w, 250n, "same-key")));
    const answered = results.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
    expect(answered.filter((r) => !r.replayed)).toHaveLength(1);
    expect(new Set(answered.map((r) => r.action!.id)).size).toBe(1);
    for (const r of results) if (r.status === "rejected") expect(String(r.reason)).toContain("still being processed");
    expect(await actionCount(w)).toBe(1n);
    expect(h.calls.transfers.filter((c) => c.idempotencyKey === `agent-action/${answered[0]!.action!.id}`)).toHaveLength(1);
  });

  it("actions read their quote and transaction as they are now", async () => {
    const w = await world(h, AUTO);
    const { action } = await transferOut(h, w, 10n);
    h.transactions.get(action!.transaction!.id)!.status = "COMPLETED";
    expect((await h.client.getAgentAction({ platformId: w.platformId, agentId: w.agentId, actionId: action!.id })).action?.transaction?.status).toBe("COMPLETED");
    expect((await h.client.listAgentActions({ platformId: w.platformId, agentId: w.agentId })).actions[0]?.transaction?.status).toBe("COMPLETED");
  });
});
