import { AppError, MAX_AMOUNT, decodeKeysetCursor, errors, isId, newId, pageSize, toPage, type Clock, type FieldError } from "@corridor/kit";
import { convertAmount } from "./conversion.js";
import { checkLimits, countingCurrency, executionMode, reservedAmount, type Submission } from "./evaluation.js";
import type { Executor } from "./execution.js";
import type { Hydrator } from "./hydration.js";
import type { Complete, Idempotent } from "./idempotency.js";
import { ACTION_STATUSES, type Action, type ActionStatus, type ActionType, type Agent, type Page, type PageRequest, type Permission, type Policy, type QuoteFacts, type QuoteRequest } from "./model.js";
import type { AccountDirectory, ActionFilter, PlatformTime, QuotesPort, RatesPort, Store, UsageRow } from "./ports.js";
import { textError } from "./text.js";
import { changeAction, failAction } from "./transitions.js";
import { dayKey, monthKey } from "./windows.js";

/**
 * Agent actions (docs/agents.md "Actions"): submissions under the policy, approvals, reads.
 *
 * A submission reads every remote fact first (accounts, the quote, the platform's clock, rates),
 * then ONE short transaction locks the agent's row, re-checks what may have changed, evaluates the
 * limits against the usage rows, inserts the action and reserves its amount — so concurrent
 * submissions of an agent queue on that lock and no interleaving passes a limit. Execution comes
 * after the commit (see execution.ts).
 */

export interface ActionsDeps {
  store: Store;
  clock: Clock;
  time: PlatformTime;
  accounts: AccountDirectory;
  quotes: QuotesPort;
  rates: RatesPort;
  executor: Executor;
  hydrator: Hydrator;
  idempotent: Idempotent;
}

export interface TransferRequest {
  direction: string;
  sourceAccountId: string;
  destinationAccountId: string;
  amount: bigint;
  description: string;
}

/** What a submission moves, from the remote facts read before the transaction. */
interface Prepared {
  type: ActionType;
  quote?: QuoteFacts;
  amount: bigint;
  currency: string;
  sourceAccountId: string;
  destinationAccountId: string;
  description: string;
  /** Every account it uses; `internalAccountIds` are those allowedAccountIds restricts. */
  accountIds: string[];
  internalAccountIds: string[];
  expiresAt: Date | null;
}

const DESCRIPTION_MAX = 1_000;
const REASON_MAX = 1_000;
/** A policy whose currencies change between the reads and the lock is evaluated again, this often at most. */
const POLICY_RETRIES = 3;

const actionNotFound = (id: string) => errors.notFound("AgentAction", id);
const quoteNotFound = (id: string) => new AppError("NOT_FOUND", "QUOTE_NOT_FOUND", `Quote ${id} not found`, { id });
const notPending = (a: Action) =>
  errors.conflict("INVALID_STATE_TRANSITION", `Action ${a.id} is ${a.status}; only a PENDING_APPROVAL action can be approved or rejected`, { id: a.id, status: a.status });

/** 403 AGENT_PAUSED, then 403 FORBIDDEN naming the permission (docs/agents.md, step 1). */
export function assertMayAct(agent: Agent, permission: Permission): void {
  if (agent.isPaused) throw new AppError("FORBIDDEN", "AGENT_PAUSED", "This agent is paused; the platform can resume it with PATCH /agents/{agentId}", { agentId: agent.id });
  if (!agent.policy.permissions.includes(permission)) {
    throw errors.forbidden(`This agent's policy lacks the ${permission} permission`, { requiredPermission: permission });
  }
}

/** 403 ACCOUNT_NOT_ALLOWED when allowedAccountIds is set and an internal account is not in it. */
function assertAllowed(policy: Policy, internalAccountIds: string[]): void {
  if (!policy.allowedAccountIds) return;
  const refused = internalAccountIds.find((id) => !policy.allowedAccountIds!.includes(id));
  if (refused) throw new AppError("FORBIDDEN", "ACCOUNT_NOT_ALLOWED", `This agent's policy does not allow account ${refused}`, { accountId: refused });
}

/**
 * Whether amounts counted for policy `a` serve policy `b` too: the same counting currency for the
 * action's accounts (a rule limit added in between changes it from none to USD) and the same
 * thresholds currency.
 */
const sameCurrencies = (a: Policy, b: Policy, accountIds: readonly string[]) =>
  countingCurrency(a, accountIds) === countingCurrency(b, accountIds) && a.approvalThresholds?.currency === b.approvalThresholds?.currency;

/** What an action moves, as far as counting it in another currency needs (a quote carries its own rate). */
interface Moved {
  amount: bigint;
  currency: string;
  quote?: Pick<QuoteFacts, "sendingCurrency" | "receivingCurrency" | "totalSendingAmount" | "totalReceivingAmount">;
}

/** The accounts a recorded action uses (as its submission listed them), and those allowedAccountIds restricts. */
const accountsOf = (a: Action) => [a.sourceAccountId, a.destinationAccountId].filter((id) => id !== "");
const internalOf = (ids: string[]) => ids.filter((id) => id.startsWith("InternalAccount:"));

export function createActions(deps: ActionsDeps) {
  const { store, clock, time } = deps;

  async function requireAgent(platformId: string, agentId: string): Promise<Agent> {
    const agent = isId("Agent", agentId) ? await store.agent(platformId, agentId) : undefined;
    if (!agent) throw errors.notFound("Agent", agentId);
    return agent;
  }

  /** The action of that agent on that platform; 404 AGENT_ACTION_NOT_FOUND otherwise. */
  async function requireAction(platformId: string, agentId: string, actionId: string): Promise<Action> {
    const a = isId("AgentAction", actionId) ? await store.action(platformId, actionId) : undefined;
    if (!a || a.agentId !== agentId) throw actionNotFound(actionId);
    return a;
  }

  /** Step 3: the action's amount in `currency` (the quote's own rate where it has one, else the current rate, rounded up). */
  async function amountIn(platformId: string, p: Moved, currency: string): Promise<bigint> {
    if (p.quote) {
      const q = p.quote;
      if (currency === q.sendingCurrency) return q.totalSendingAmount;
      if (currency === q.receivingCurrency) return q.totalReceivingAmount;
      return convertAmount(q.totalSendingAmount, q.sendingCurrency, currency, await deps.rates.rate(platformId, q.sendingCurrency, currency));
    }
    if (currency === p.currency) return p.amount;
    return convertAmount(p.amount, p.currency, currency, await deps.rates.rate(platformId, p.currency, currency));
  }

  /** The amounts evaluating `p` under `policy` needs: in the counting currency and in the thresholds' currency (0 where none). */
  async function amountsFor(platformId: string, policy: Policy, p: Moved, accountIds: readonly string[]): Promise<Pick<Submission, "countedAmount" | "thresholdAmount">> {
    const counting = countingCurrency(policy, accountIds);
    const [countedAmount, thresholdAmount] = await Promise.all([
      counting ? amountIn(platformId, p, counting) : 0n,
      policy.approvalThresholds ? amountIn(platformId, p, policy.approvalThresholds.currency) : 0n,
    ]);
    return { countedAmount, thresholdAmount };
  }

  /** What a recorded action moves; a quote execution counted in another currency than its sending one reads its quote (its own rate). */
  async function movedBy(a: Action, counting: string): Promise<Moved> {
    if (a.type !== "EXECUTE_QUOTE" || counting === a.currency) return { amount: a.amount, currency: a.currency };
    return { amount: a.amount, currency: a.currency, quote: await loadQuote(a.platformId, a.agentId, a.quoteId!) };
  }

  /**
   * Why the policy as it is now refuses to let a pending action run (undefined: it allows it).
   * `usage` is of the action's own windows, its reservation included: the limits are checked
   * against what the OTHER live actions reserved there, plus the action's amount counted now.
   */
  function approvalRefusal(policy: Policy, a: Action, usage: UsageRow, countedAmount: bigint): AppError | undefined {
    const accountIds = accountsOf(a);
    const others: UsageRow = { dayCount: usage.dayCount - 1n, dayAmount: usage.dayAmount - a.countedAmount, monthAmount: usage.monthAmount - a.countedAmount };
    const permission: Permission = a.type === "EXECUTE_QUOTE" ? "EXECUTE_QUOTES" : "CREATE_TRANSFERS";
    try {
      if (!policy.permissions.includes(permission)) throw errors.forbidden(`This agent's policy lacks the ${permission} permission`, { requiredPermission: permission });
      assertAllowed(policy, internalOf(accountIds));
      checkLimits(policy, others, { countedAmount, thresholdAmount: 0n, accountIds });
      return undefined;
    } catch (err) {
      if (err instanceof AppError) return err;
      throw err;
    }
  }

  /**
   * Evaluates and records a submission, then executes it under AUTO. `complete` stores the
   * Idempotency-Key's answer in the same transaction as the action.
   */
  async function submit(agent: Agent, permission: Permission, p: Prepared, platformNow: Date, complete: Complete, answer: (a: Action) => unknown): Promise<Action> {
    const { platformId, id: agentId } = agent;
    let policy = agent.policy;
    for (let attempt = 1; ; attempt++) {
      const amounts = await amountsFor(platformId, policy, p, p.accountIds);
      const outcome = await store.transaction(async (tx): Promise<{ action: Action } | { changed: Policy }> => {
        const locked = await tx.lockAgent(platformId, agentId);
        if (!locked || locked.deletedAt) throw errors.notFound("Agent", agentId);
        assertMayAct(locked, permission);
        if (!sameCurrencies(locked.policy, policy, p.accountIds)) return { changed: locked.policy };
        assertAllowed(locked.policy, p.internalAccountIds);
        if (p.quote && (await tx.liveActionForQuote(platformId, p.quote.id))) {
          throw errors.conflict("INVALID_STATE_TRANSITION", `Quote ${p.quote.id} was already submitted for execution`, { id: p.quote.id });
        }
        const submission: Submission = { ...amounts, accountIds: p.accountIds };
        const day = dayKey(platformNow);
        const month = monthKey(platformNow);
        checkLimits(locked.policy, await tx.usage(platformId, agentId, day, month), submission);
        const auto = executionMode(locked.policy, submission) === "AUTO";
        const at = clock.now();
        const action: Action = {
          id: newId("AgentAction"),
          platformId,
          agentId,
          customerId: locked.customerId,
          platformCustomerId: locked.platformCustomerId,
          type: p.type,
          status: auto ? "APPROVED" : "PENDING_APPROVAL",
          quoteId: p.quote?.id ?? null,
          transactionId: null,
          amount: p.amount,
          currency: p.currency,
          sourceAccountId: p.sourceAccountId,
          destinationAccountId: p.destinationAccountId,
          description: p.description,
          countedAmount: reservedAmount(locked.policy, amounts.countedAmount),
          dayKey: day,
          monthKey: month,
          executionState: auto ? "EXECUTING" : "NOT_STARTED",
          executionClaimedAt: auto ? at : null,
          rejectionReason: "",
          failureReason: "",
          failureMessage: "",
          expiresAt: p.expiresAt,
          quoteSnapshot: p.quote?.snapshot ?? null,
          transactionSnapshot: null,
          createdAt: at,
          updatedAt: at,
        };
        await tx.insertAction(action);
        await tx.reserve(action);
        await tx.actionChanged(action, at);
        await complete(tx, answer(action));
        return { action };
      });
      if ("action" in outcome) {
        const a = outcome.action;
        return a.status === "APPROVED" ? deps.executor.execute(a) : a;
      }
      if (attempt >= POLICY_RETRIES) throw errors.conflict("POLICY_CHANGED", "The agent's policy changed while this action was evaluated; retry", {});
      policy = outcome.changed;
    }
  }

  /** The quote's execution, prepared: it must be the agent's, PENDING and not expired (platform clock). */
  function prepareQuoteExecution(agent: Agent, quote: QuoteFacts, platformNow: Date): Prepared {
    if (quote.sourceCustomerId !== agent.customerId) throw quoteNotFound(quote.id);
    if (quote.status === "EXPIRED") throw errors.conflict("QUOTE_EXPIRED", `Quote ${quote.id} expired at ${quote.expiresAt.toISOString()}`, { id: quote.id });
    if (quote.status !== "PENDING") throw errors.conflict("INVALID_STATE_TRANSITION", `Quote ${quote.id} was already executed`, { id: quote.id, status: quote.status });
    if (quote.sourceType !== "ACCOUNT") {
      throw errors.badRequest("QUOTE_NOT_EXECUTABLE", "A REALTIME_FUNDING quote proceeds when its paymentInstructions are paid, not by an execution", { id: quote.id });
    }
    if (platformNow >= quote.expiresAt) {
      throw errors.conflict("QUOTE_EXPIRED", `Quote ${quote.id} expired at ${quote.expiresAt.toISOString()}`, { id: quote.id });
    }
    // allowedAccountIds names the internal accounts money may leave or enter.
    const internalAccountIds = [quote.sourceAccountId, ...(quote.destinationAccountId.startsWith("InternalAccount:") ? [quote.destinationAccountId] : [])];
    assertAllowed(agent.policy, internalAccountIds);
    return {
      type: "EXECUTE_QUOTE",
      quote,
      amount: quote.totalSendingAmount,
      currency: quote.sendingCurrency,
      sourceAccountId: quote.sourceAccountId,
      destinationAccountId: quote.destinationAccountId,
      description: "",
      accountIds: [quote.sourceAccountId, quote.destinationAccountId].filter((id) => id !== ""),
      internalAccountIds,
      expiresAt: quote.expiresAt,
    };
  }

  async function loadQuote(platformId: string, agentId: string, quoteId: string): Promise<QuoteFacts> {
    const quote = isId("Quote", quoteId) ? await deps.quotes.get(platformId, quoteId, agentId) : undefined;
    if (!quote) throw quoteNotFound(quoteId);
    return quote;
  }

  /** A transfer's accounts: both the customer's (404 otherwise), same currency, allowed by the policy. */
  async function prepareTransfer(agent: Agent, r: TransferRequest): Promise<Prepared> {
    const direction = r.direction === "IN" || r.direction === "OUT" ? r.direction : undefined;
    const errs: FieldError[] = [];
    if (!direction) errs.push({ field: "direction", reason: "must be IN or OUT" });
    if (r.amount < 1n || r.amount > MAX_AMOUNT) errs.push({ field: "amount", reason: `must be an integer from 1 to ${MAX_AMOUNT}` });
    if (!r.sourceAccountId) errs.push({ field: "source.accountId", reason: "is required" });
    if (!r.destinationAccountId) errs.push({ field: "destination.accountId", reason: "is required" });
    const bad = textError("description", r.description, 0, DESCRIPTION_MAX);
    if (bad) errs.push(bad);
    if (errs.length) throw errors.invalidInput(errs);
    const internalId = direction === "OUT" ? r.sourceAccountId : r.destinationAccountId;
    const externalId = direction === "OUT" ? r.destinationAccountId : r.sourceAccountId;
    const [internal, external] = await Promise.all([
      isId("InternalAccount", internalId) ? deps.accounts.internalAccount(agent.platformId, internalId) : undefined,
      isId("ExternalAccount", externalId) ? deps.accounts.externalAccount(agent.platformId, externalId, agent.customerId) : undefined,
    ]);
    if (!internal || internal.customerId !== agent.customerId) throw errors.notFound("InternalAccount", internalId);
    if (!external || external.customerId !== agent.customerId) throw errors.notFound("ExternalAccount", externalId);
    assertAllowed(agent.policy, [internal.id]);
    if (internal.currency !== external.currency) {
      throw errors.badRequest("CURRENCY_MISMATCH", `The internal account holds ${internal.currency} but the external account ${external.currency}`, {
        internalCurrency: internal.currency,
        externalCurrency: external.currency,
      });
    }
    return {
      type: direction === "IN" ? "TRANSFER_IN" : "TRANSFER_OUT",
      amount: r.amount,
      currency: internal.currency,
      sourceAccountId: r.sourceAccountId,
      destinationAccountId: r.destinationAccountId,
      description: r.description,
      accountIds: [internal.id, external.id],
      internalAccountIds: [internal.id],
      expiresAt: null,
    };
  }

  /** Validates a status filter ("" for all). */
  function statusFilter(status: string): ActionStatus | undefined {
    if (status === "") return undefined;
    if (!(ACTION_STATUSES as readonly string[]).includes(status)) throw errors.invalidInput([{ field: "status", reason: `must be one of ${ACTION_STATUSES.join(", ")}` }]);
    return status as ActionStatus;
  }

  async function listPage(filter: ActionFilter, page: PageRequest, ascending: boolean): Promise<Page<Action>> {
    const limit = pageSize(page.limit);
    const after = decodeKeysetCursor(page.cursor, "timestamp");
    // An id filter that cannot name anything matches nothing (and never reaches a statement).
    if ((filter.agentId !== undefined && !isId("Agent", filter.agentId)) || (filter.customerId !== undefined && !isId("Customer", filter.customerId))) {
      return { data: [], hasMore: false, totalCount: 0 };
    }
    const [rows, total] = await Promise.all([store.listActions(filter, { limit: limit + 1, after: after && { at: after.k, id: after.id }, ascending }), store.countActions(filter)]);
    const p = toPage(rows, limit, (a) => ({ k: a.createdAt.toISOString(), id: a.id }), total);
    return { ...p, data: await deps.hydrator.forList(p.data) };
  }

  /** The answer stored with an Idempotency-Key, and how a replay turns it back into the action. */
  const actionAnswer = (a: Action) => ({ actionId: a.id });
  const replayAction = (platformId: string, agentId: string) => async (body: { actionId: string }) =>
    deps.hydrator.full(await requireAction(platformId, agentId, body.actionId));

  /** Approve's and reject's common start: the pending action and its quote as it is now (read before any transaction). */
  async function pendingWithQuote(platformId: string, agentId: string, actionId: string): Promise<Action> {
    const a = await requireAction(platformId, agentId, actionId);
    if (a.status !== "PENDING_APPROVAL") throw notPending(a);
    return a.type === "EXECUTE_QUOTE" ? deps.hydrator.hydrate(a, { quote: true, transaction: false }) : a;
  }

  return {
    /** POST /agents/me/transfer-in|out (CREATE_TRANSFERS): the action, APPROVED (executed), PENDING_APPROVAL or FAILED. */
    async submitTransfer(platformId: string, agentId: string, r: TransferRequest, idempotencyKey: string): Promise<{ action: Action; replayed: boolean }> {
      const request = { op: "TRANSFER", direction: r.direction, source: r.sourceAccountId, destination: r.destinationAccountId, amount: r.amount, description: r.description };
      const res = await deps.idempotent(
        { platformId, agentId, key: idempotencyKey, request },
        async (complete) => {
          const agent = await requireAgent(platformId, agentId);
          assertMayAct(agent, "CREATE_TRANSFERS");
          const p = await prepareTransfer(agent, r);
          const platformNow = await time.now(platformId);
          return deps.hydrator.full(await submit(agent, "CREATE_TRANSFERS", p, platformNow, complete, actionAnswer));
        },
        replayAction(platformId, agentId),
      );
      return { action: res.value, replayed: res.replayed };
    },

    /** POST /agents/me/quotes/{id}/execute (EXECUTE_QUOTES). */
    async submitQuoteExecution(platformId: string, agentId: string, quoteId: string, idempotencyKey: string): Promise<{ action: Action; replayed: boolean }> {
      const res = await deps.idempotent(
        { platformId, agentId, key: idempotencyKey, request: { op: "EXECUTE_QUOTE", quoteId } },
        async (complete) => {
          const agent = await requireAgent(platformId, agentId);
          assertMayAct(agent, "EXECUTE_QUOTES");
          const [quote, platformNow] = await Promise.all([loadQuote(platformId, agentId, quoteId), time.now(platformId)]);
          const p = prepareQuoteExecution(agent, quote, platformNow);
          return deps.hydrator.full(await submit(agent, "EXECUTE_QUOTES", p, platformNow, complete, actionAnswer));
        },
        replayAction(platformId, agentId),
      );
      return { action: res.value, replayed: res.replayed };
    },

    /**
     * POST /agents/me/quotes (CREATE_QUOTES): quotes-fx creates the quote for the agent's customer.
     * With immediatelyExecute (also EXECUTE_QUOTES) its execution is submitted as by
     * submitQuoteExecution, and the quote is answered as it then is.
     */
    async createQuote(platformId: string, agentId: string, request: QuoteRequest, idempotencyKey: string): Promise<{ quote: QuoteFacts; replayed: boolean }> {
      const agent = await requireAgent(platformId, agentId);
      assertMayAct(agent, "CREATE_QUOTES");
      if (request.immediatelyExecute) assertMayAct(agent, "EXECUTE_QUOTES");
      if (request.source.customerId && request.source.customerId !== agent.customerId) throw errors.notFound("Customer", request.source.customerId);
      if (request.source.sourceType === "ACCOUNT" && request.source.accountId) assertAllowed(agent.policy, [request.source.accountId]);
      const res = await deps.idempotent(
        { platformId, agentId, key: idempotencyKey, request: { op: "CREATE_QUOTE", ...request } },
        async (complete) => {
          const quote = await deps.quotes.create({
            platformId,
            agentId,
            actingCustomerId: agent.customerId,
            // quotes-fx keeps its own record of the key, so a retry after a crash finds the same quote.
            idempotencyKey: idempotencyKey ? `agent/${agentId}/${idempotencyKey}` : "",
            request: { ...request, immediatelyExecute: false },
          });
          if (!request.immediatelyExecute) {
            if (idempotencyKey) await store.transaction((tx) => complete(tx, { quoteId: quote.id }));
            return quote;
          }
          const platformNow = await time.now(platformId);
          await submit(agent, "EXECUTE_QUOTES", prepareQuoteExecution(agent, quote, platformNow), platformNow, complete, () => ({ quoteId: quote.id }));
          return (await deps.quotes.get(platformId, quote.id, agentId)) ?? quote;
        },
        async (body: { quoteId: string }) => loadQuote(platformId, agentId, body.quoteId),
      );
      return { quote: res.value, replayed: res.replayed };
    },

    /** GET /agents/me/quotes/{id} (CREATE_QUOTES): only a quote this agent created. */
    async getQuote(platformId: string, agentId: string, quoteId: string): Promise<QuoteFacts> {
      assertMayAct(await requireAgent(platformId, agentId), "CREATE_QUOTES");
      return loadQuote(platformId, agentId, quoteId);
    },

    /**
     * POST /agents/{id}/actions/{id}/approve: executes it, if the policy as it is NOW still allows
     * it. Under the agent's row lock the action is evaluated again (docs/agents.md "Approval"): the
     * permission, allowedAccountIds, every perTransactionLimit that binds it, and the daily count,
     * daily and monthly sums of the windows it was submitted in (what the other live actions
     * reserved there, plus its own amount). A policy that no longer allows it ends it FAILED
     * POLICY_DENIED with its reservation back; past the quote's expiry, FAILED QUOTE_EXPIRED.
     */
    async approve(platformId: string, agentId: string, actionId: string): Promise<Action> {
      const seen = await pendingWithQuote(platformId, agentId, actionId);
      const platformNow = await time.now(platformId);
      const accountIds = accountsOf(seen);
      let policy = (await requireAgent(platformId, agentId)).policy;
      for (let attempt = 1; ; attempt++) {
        const counting = countingCurrency(policy, accountIds);
        const countedAmount = counting ? await amountIn(platformId, await movedBy(seen, counting), counting) : 0n;
        const outcome = await store.transaction(async (tx): Promise<{ action: Action } | { changed: Policy }> => {
          const locked = await tx.lockAgent(platformId, agentId);
          const a = await tx.lockAction(platformId, actionId);
          if (!locked || !a) throw actionNotFound(actionId);
          if (a.status !== "PENDING_APPROVAL") throw notPending(a);
          const at = clock.now();
          if (a.expiresAt && platformNow >= a.expiresAt) {
            return { action: await failAction(tx, a, "QUOTE_EXPIRED", `The quote expired at ${a.expiresAt.toISOString()}, before the approval`, at, { quoteSnapshot: seen.quoteSnapshot }) };
          }
          if (countingCurrency(locked.policy, accountIds) !== counting) return { changed: locked.policy };
          const usage = await tx.usage(platformId, agentId, a.dayKey, a.monthKey);
          const denied = approvalRefusal(locked.policy, a, usage, countedAmount);
          if (denied) {
            return { action: await failAction(tx, a, "POLICY_DENIED", `${denied.code}: ${denied.message}`, at, { quoteSnapshot: seen.quoteSnapshot }) };
          }
          // The reservation follows the policy it is approved under (spendingLimits added, or their currency changed, since submission).
          const reserved = reservedAmount(locked.policy, countedAmount);
          let current = a;
          if (reserved !== a.countedAmount) {
            await tx.release(a);
            current = { ...a, countedAmount: reserved };
            await tx.reserve(current);
          }
          return { action: await changeAction(tx, current, { status: "APPROVED", executionState: "EXECUTING", executionClaimedAt: at, quoteSnapshot: seen.quoteSnapshot }, at) };
        });
        if ("action" in outcome) {
          const decided = outcome.action;
          return deps.hydrator.full(decided.status === "APPROVED" ? await deps.executor.execute(decided) : decided);
        }
        if (attempt >= POLICY_RETRIES) throw errors.conflict("POLICY_CHANGED", "The agent's policy changed while this approval was evaluated; retry", {});
        policy = outcome.changed;
      }
    },

    /** POST /agents/{id}/actions/{id}/reject: nothing moves; the reservation comes back. */
    async reject(platformId: string, agentId: string, actionId: string, reason: string): Promise<Action> {
      const bad = textError("reason", reason, 0, REASON_MAX);
      if (bad) throw errors.invalidInput([bad]);
      const seen = await pendingWithQuote(platformId, agentId, actionId);
      const rejected = await store.transaction(async (tx) => {
        await tx.lockAgent(platformId, agentId);
        const a = await tx.lockAction(platformId, actionId);
        if (!a) throw actionNotFound(actionId);
        if (a.status !== "PENDING_APPROVAL") throw notPending(a);
        return changeAction(tx, a, { status: "REJECTED", rejectionReason: reason, quoteSnapshot: seen.quoteSnapshot }, clock.now());
      });
      return deps.hydrator.full(rejected);
    },

    /** GET /agents/approvals: PENDING_APPROVAL only. */
    async listApprovals(
      filter: { platformId: string; agentId?: string; customerId?: string; createdFrom?: Date; createdTo?: Date },
      page: PageRequest,
      ascending: boolean,
    ): Promise<Page<Action>> {
      return listPage({ ...filter, status: "PENDING_APPROVAL" }, page, ascending);
    },

    /** An agent's actions, newest first (also the platform's view of a deleted agent's actions). */
    async list(platformId: string, agentId: string, status: string, page: PageRequest): Promise<Page<Action>> {
      return listPage({ platformId, agentId, status: statusFilter(status) }, page, false);
    },

    async get(platformId: string, agentId: string, actionId: string): Promise<Action> {
      return deps.hydrator.full(await requireAction(platformId, agentId, actionId));
    },
  };
}

export type Actions = ReturnType<typeof createActions>;
