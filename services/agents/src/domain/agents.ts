import { AppError, decodeKeysetCursor, errors, isId, newId, pageSize, toPage, type Clock, type FieldError } from "@corridor/kit";
import { displayDeviceCode, hashAccessToken, newAccessToken, newDeviceCode, normalizeDeviceCode } from "./credentials.js";
import type { Hydrator } from "./hydration.js";
import type { Agent, AgentWithUsage, DeviceCode, DeviceCodeStatus, Page, PageRequest, PolicyDraft, PolicyPatch } from "./model.js";
import { patchedDraft, resolvePolicy, validatePolicy } from "./policy.js";
import { textError } from "./text.js";
import type { AccountDirectory, AgentFilter, CustomerDirectory, PlatformTime, QuotesPort, Store, StoreTx, UsageRow } from "./ports.js";
import { failAction } from "./transitions.js";
import { dayKey, monthKey, nextDay, nextMonth } from "./windows.js";

/**
 * Agents, their policies, device codes and access tokens (docs/agents.md). Platform use cases are
 * scoped by platform: another platform's agent is 404, as is a deleted one.
 */

export interface AgentsDeps {
  store: Store;
  clock: Clock;
  time: PlatformTime;
  customers: CustomerDirectory;
  accounts: AccountDirectory;
  quotes: QuotesPort;
  hydrator: Hydrator;
  deviceCodeTtlMs: number;
}

export interface DeviceCodeView {
  /** As shown to people: ABCD-EFGH. */
  code: string;
  agentId: string;
  expiresAt: Date;
  status: DeviceCodeStatus;
}

const NAME_MAX = 255;
const agentNotFound = (id: string) => errors.notFound("Agent", id);
const invalidDeviceCode = () => new AppError("INVALID", "INVALID_DEVICE_CODE", "This device code is not valid: it is unknown, used, replaced by a newer one or expired");
const deviceCodeNotFound = () => new AppError("NOT_FOUND", "DEVICE_CODE_NOT_FOUND", "Device code not found");
const alreadyConnected = (agentId: string) => errors.conflict("AGENT_ALREADY_CONNECTED", "This agent is already connected; it needs no device code", { agentId });

/** Codes are random; on the rare collision with a stored one, draw again. */
const MAX_CODE_DRAWS = 5;

function nameError(name: string, field = "name"): FieldError | undefined {
  if (name.trim() === "") return { field, reason: "must be 1 to 255 characters" };
  return textError(field, name, 1, NAME_MAX);
}

export function statusOf(dc: DeviceCode, now: Date): DeviceCodeStatus {
  if (dc.redeemedAt) return "REDEEMED";
  if (dc.voidedAt) return "VOIDED";
  return now >= dc.expiresAt ? "EXPIRED" : "PENDING";
}

export function usageOf(row: UsageRow | undefined, now: Date) {
  return {
    dailyTransactionCount: row?.dayCount ?? 0n,
    dailySpend: row?.dayAmount ?? 0n,
    monthlySpend: row?.monthAmount ?? 0n,
    dailyResetDate: nextDay(now),
    monthlyResetMonth: nextMonth(now),
  };
}

export function createAgents(deps: AgentsDeps) {
  const { store, clock, time } = deps;

  async function requireAgent(platformId: string, agentId: string): Promise<Agent> {
    const agent = isId("Agent", agentId) ? await store.agent(platformId, agentId) : undefined;
    if (!agent) throw agentNotFound(agentId);
    return agent;
  }

  /** The agents with their usage in the platform's current windows (one clock read, one query). */
  async function withUsage(platformId: string, agents: Agent[]): Promise<AgentWithUsage[]> {
    if (agents.length === 0) return [];
    const now = await time.now(platformId);
    const rows = await store.usages(
      platformId,
      agents.map((a) => a.id),
      dayKey(now),
      monthKey(now),
    );
    return agents.map((agent) => ({ agent, usage: usageOf(rows.get(agent.id), now) }));
  }
  const one = async (agent: Agent) => (await withUsage(agent.platformId, [agent]))[0]!;

  /** Inserts a fresh code for the agent (voiding its open ones first), inside `tx`. */
  async function issueCode(tx: StoreTx, agent: Agent, platformNow: Date): Promise<DeviceCode> {
    const at = clock.now();
    await tx.voidOpenDeviceCodes(agent.platformId, agent.id, at);
    for (let draw = 0; draw < MAX_CODE_DRAWS; draw++) {
      const dc: DeviceCode = {
        code: newDeviceCode(),
        platformId: agent.platformId,
        agentId: agent.id,
        expiresAt: new Date(platformNow.getTime() + deps.deviceCodeTtlMs),
        redeemedAt: null,
        voidedAt: null,
        createdAt: at,
      };
      if (await tx.insertDeviceCode(dc)) return dc;
    }
    throw new Error("could not draw an unused device code");
  }

  const codeView = (dc: DeviceCode, now: Date): DeviceCodeView => ({ code: displayDeviceCode(dc.code), agentId: dc.agentId, expiresAt: dc.expiresAt, status: statusOf(dc, now) });

  return {
    /** POST /agents: the customer must be the platform's and not deleted (404 USER_NOT_FOUND). */
    async create(input: { platformId: string; customerId: string; name: string; policy?: PolicyDraft }): Promise<{ agent: AgentWithUsage; deviceCode: DeviceCodeView }> {
      const bad = nameError(input.name);
      if (bad) throw errors.invalidInput([bad]);
      const customer = isId("Customer", input.customerId) ? await deps.customers.customer(input.platformId, input.customerId) : undefined;
      if (!customer || customer.isDeleted) throw errors.notFound("Customer", input.customerId);
      const policy = await resolvePolicy(input.policy ?? {}, { prefix: "policy.", platformId: input.platformId, customerId: input.customerId, accounts: deps.accounts });
      const platformNow = await time.now(input.platformId);
      const at = clock.now();
      const agent: Agent = {
        id: newId("Agent"),
        platformId: input.platformId,
        customerId: input.customerId,
        platformCustomerId: customer.platformCustomerId,
        name: input.name,
        isPaused: false,
        isConnected: false,
        policy,
        deletedAt: null,
        createdAt: at,
        updatedAt: at,
      };
      const dc = await store.transaction(async (tx) => {
        await tx.insertAgent(agent);
        return issueCode(tx, agent, platformNow);
      });
      return { agent: { agent, usage: usageOf(undefined, platformNow) }, deviceCode: codeView(dc, platformNow) };
    },

    async list(filter: AgentFilter, page: PageRequest): Promise<Page<AgentWithUsage>> {
      const limit = pageSize(page.limit);
      const after = decodeKeysetCursor(page.cursor, "timestamp");
      // A customer filter that cannot name a customer matches nothing (and never reaches a statement).
      if (filter.customerId !== undefined && !isId("Customer", filter.customerId)) return { data: [], hasMore: false, totalCount: 0 };
      const [rows, total] = await Promise.all([
        store.listAgents(filter, { limit: limit + 1, after: after && { at: after.k, id: after.id }, ascending: false }),
        store.countAgents(filter),
      ]);
      const p = toPage(rows, limit, (a) => ({ k: a.createdAt.toISOString(), id: a.id }), total);
      return { ...p, data: await withUsage(filter.platformId, p.data) };
    },

    async get(platformId: string, agentId: string): Promise<AgentWithUsage> {
      return one(await requireAgent(platformId, agentId));
    },

    /** PATCH /agents/{id}: rename, pause or resume. */
    async update(platformId: string, agentId: string, change: { name?: string; isPaused?: boolean }): Promise<AgentWithUsage> {
      if (change.name !== undefined) {
        const bad = nameError(change.name);
        if (bad) throw errors.invalidInput([bad]);
      }
      await requireAgent(platformId, agentId);
      const agent = await store.transaction(async (tx) => {
        const locked = await tx.lockAgent(platformId, agentId);
        if (!locked || locked.deletedAt) throw agentNotFound(agentId);
        return tx.updateAgent(platformId, agentId, { name: change.name, isPaused: change.isPaused, updatedAt: clock.now() });
      });
      return one(agent);
    },

    /**
     * DELETE /agents/{id}: its tokens stop at once, its open device codes are voided, and its pending
     * actions become FAILED AGENT_INACTIVE (reservations back). Its actions stay readable.
     */
    async delete(platformId: string, agentId: string): Promise<void> {
      await requireAgent(platformId, agentId);
      // Quotes for the events, read before the transaction; an action that turns up pending only
      // after this read is failed with its stored snapshot.
      const pending = await store.listActions({ platformId, agentId, status: "PENDING_APPROVAL" }, { limit: 1_000, ascending: true });
      const fresh = new Map((await Promise.all(pending.map((a) => deps.hydrator.hydrate(a, { quote: true, transaction: false })))).map((a) => [a.id, a.quoteSnapshot]));
      await store.transaction(async (tx) => {
        const locked = await tx.lockAgent(platformId, agentId);
        if (!locked || locked.deletedAt) throw agentNotFound(agentId);
        const at = clock.now();
        await tx.updateAgent(platformId, agentId, { deletedAt: at, updatedAt: at });
        await tx.deleteAccessTokens(platformId, agentId);
        await tx.voidOpenDeviceCodes(platformId, agentId, at);
        for (const a of await tx.lockPendingActions(platformId, agentId)) {
          await failAction(tx, a, "AGENT_INACTIVE", "The agent was deleted before the action was approved", at, { quoteSnapshot: fresh.get(a.id) ?? a.quoteSnapshot });
        }
      });
    },

    /** PATCH /agents/{id}/policy: only the named fields change; the result is validated whole. */
    async updatePolicy(platformId: string, agentId: string, patch: PolicyPatch): Promise<AgentWithUsage> {
      const agent = await requireAgent(platformId, agentId);
      await resolvePolicy(patchedDraft(agent.policy, patch), { prefix: "", previous: agent.policy, platformId, customerId: agent.customerId, accounts: deps.accounts });
      const updated = await store.transaction(async (tx) => {
        const locked = await tx.lockAgent(platformId, agentId);
        if (!locked || locked.deletedAt) throw agentNotFound(agentId);
        // Applied to the policy as it is now, so a concurrent patch of other fields is not lost
        // (the accounts it added were verified by that patch, ours by the check above).
        const merged = validatePolicy(patchedDraft(locked.policy, patch), "");
        return tx.updateAgent(platformId, agentId, { policy: merged, updatedAt: clock.now() });
      });
      return one(updated);
    },

    /** POST /agents/{id}/device-codes: voids older open codes; 409 for a connected agent. */
    async issueDeviceCode(platformId: string, agentId: string): Promise<DeviceCodeView> {
      const agent = await requireAgent(platformId, agentId);
      if (agent.isConnected) throw alreadyConnected(agentId);
      const platformNow = await time.now(platformId);
      const dc = await store.transaction(async (tx) => {
        const locked = await tx.lockAgent(platformId, agentId);
        if (!locked || locked.deletedAt) throw agentNotFound(agentId);
        if (locked.isConnected) throw alreadyConnected(agentId);
        return issueCode(tx, locked, platformNow);
      });
      return codeView(dc, platformNow);
    },

    /** GET /agents/device-codes/{code}/status: 404 for a code the platform never issued. */
    async deviceCodeStatus(platformId: string, code: string): Promise<DeviceCodeView> {
      const normalized = normalizeDeviceCode(code);
      const dc = normalized ? await store.deviceCode(normalized) : undefined;
      if (!dc || dc.platformId !== platformId) throw deviceCodeNotFound();
      return codeView(dc, await time.now(platformId));
    },

    /**
     * POST /agents/device-codes/{code}/redeem (no platform auth): one transaction checks the code,
     * connects the agent and stores the new token's hash, so two redeems of a code have one winner.
     */
    async redeem(code: string): Promise<{ agent: AgentWithUsage; accessToken: string }> {
      const normalized = normalizeDeviceCode(code);
      const found = normalized ? await store.deviceCode(normalized) : undefined;
      if (!found) throw invalidDeviceCode();
      const platformNow = await time.now(found.platformId);
      const token = newAccessToken();
      const agent = await store.transaction(async (tx) => {
        // Agent first, then its code: the order every other path locks in.
        const locked = await tx.lockAgent(found.platformId, found.agentId);
        const dc = await tx.lockDeviceCode(found.code);
        if (!dc || !locked || locked.deletedAt || statusOf(dc, platformNow) !== "PENDING") throw invalidDeviceCode();
        if (locked.isConnected) throw alreadyConnected(locked.id);
        const at = clock.now();
        await tx.markDeviceCodeRedeemed(dc.code, at);
        await tx.insertAccessToken(hashAccessToken(token), locked.platformId, locked.id, at);
        return tx.updateAgent(locked.platformId, locked.id, { isConnected: true, updatedAt: at });
      });
      return { agent: await one(agent), accessToken: token };
    },

    /** Bearer token → its agent; 401 UNAUTHORIZED for anything else (deleted agents included). No usage: it would cost a clock read per request. */
    async authenticate(accessToken: string): Promise<AgentWithUsage> {
      const agent = accessToken.startsWith("agt_") && accessToken.length <= 512 ? await store.agentByTokenHash(hashAccessToken(accessToken)) : undefined;
      if (!agent) throw errors.unauthorized("Missing or invalid agent access token");
      return { agent };
    },
  };
}

export type Agents = ReturnType<typeof createAgents>;
