import type { Kysely, Selectable, Transaction } from "kysely";
import type { Agent, DeviceCode, ExecutionMode, Permission, Policy } from "../domain/model.js";
import type { AgentChange, AgentFilter, ListQuery } from "../domain/ports.js";
import type { AgentsDatabase, AgentsTable, DeviceCodesTable } from "./tables.js";

/** Agents, device codes and access tokens over Kysely: plain functions of `db | trx`, every statement scoped by platform. */

export type Db = Kysely<AgentsDatabase> | Transaction<AgentsDatabase>;

/* ---------- policy as jsonb (amounts as decimal strings: jsonb has no int8) ---------- */

interface PolicyJson {
  permissions: string[];
  defaultExecutionMode: string;
  spendingLimits: { currency: string; perTransactionLimit: string; dailyLimit: string; dailyTransactionLimit: string; monthlyLimit: string } | null;
  allowedAccountIds: string[] | null;
  accountRules: { accountId: string; executionMode: string; perTransactionLimit: string }[];
  approvalThresholds: { currency: string; amount: string } | null;
}

export function policyToJson(p: Policy): string {
  const json: PolicyJson = {
    permissions: p.permissions,
    defaultExecutionMode: p.defaultExecutionMode,
    spendingLimits: p.spendingLimits && {
      currency: p.spendingLimits.currency,
      perTransactionLimit: p.spendingLimits.perTransactionLimit.toString(),
      dailyLimit: p.spendingLimits.dailyLimit.toString(),
      dailyTransactionLimit: p.spendingLimits.dailyTransactionLimit.toString(),
      monthlyLimit: p.spendingLimits.monthlyLimit.toString(),
    },
    allowedAccountIds: p.allowedAccountIds,
    accountRules: p.accountRules.map((r) => ({ accountId: r.accountId, executionMode: r.executionMode, perTransactionLimit: r.perTransactionLimit.toString() })),
    approvalThresholds: p.approvalThresholds && { currency: p.approvalThresholds.currency, amount: p.approvalThresholds.amount.toString() },
  };
  return JSON.stringify(json);
}

export function policyFromJson(raw: unknown): Policy {
  const j = (typeof raw === "string" ? JSON.parse(raw) : raw) as PolicyJson;
  const l = j.spendingLimits;
  const t = j.approvalThresholds;
  return {
    permissions: j.permissions as Permission[],
    defaultExecutionMode: j.defaultExecutionMode as ExecutionMode,
    spendingLimits: l
      ? {
          currency: l.currency,
          perTransactionLimit: BigInt(l.perTransactionLimit),
          dailyLimit: BigInt(l.dailyLimit),
          dailyTransactionLimit: BigInt(l.dailyTransactionLimit),
          monthlyLimit: BigInt(l.monthlyLimit),
        }
      : null,
    allowedAccountIds: j.allowedAccountIds,
    accountRules: j.accountRules.map((r) => ({ accountId: r.accountId, executionMode: r.executionMode as ExecutionMode | "", perTransactionLimit: BigInt(r.perTransactionLimit) })),
    approvalThresholds: t ? { currency: t.currency, amount: BigInt(t.amount) } : null,
  };
}

/* ---------- agents ---------- */

function toAgent(r: Selectable<AgentsTable>): Agent {
  return {
    id: r.id,
    platformId: r.platform_id,
    customerId: r.customer_id,
    platformCustomerId: r.platform_customer_id,
    name: r.name,
    isPaused: r.is_paused,
    isConnected: r.is_connected,
    policy: policyFromJson(r.policy),
    deletedAt: r.deleted_at,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export async function insertAgent(db: Db, a: Agent): Promise<void> {
  await db
    .insertInto("agents")
    .values({
      id: a.id,
      platform_id: a.platformId,
      customer_id: a.customerId,
      platform_customer_id: a.platformCustomerId,
      name: a.name,
      is_paused: a.isPaused,
      is_connected: a.isConnected,
      policy: policyToJson(a.policy),
      deleted_at: a.deletedAt,
      created_at: a.createdAt,
      updated_at: a.updatedAt,
    })
    .execute();
}

/** A live (not deleted) agent of the platform. */
export async function findAgent(db: Db, platformId: string, agentId: string): Promise<Agent | undefined> {
  const r = await db.selectFrom("agents").selectAll().where("platform_id", "=", platformId).where("id", "=", agentId).where("deleted_at", "is", null).executeTakeFirst();
  return r && toAgent(r);
}

/** The agent's row under FOR UPDATE, deleted or not. */
export async function lockAgent(db: Db, platformId: string, agentId: string): Promise<Agent | undefined> {
  const r = await db.selectFrom("agents").selectAll().where("platform_id", "=", platformId).where("id", "=", agentId).forUpdate().executeTakeFirst();
  return r && toAgent(r);
}

export async function updateAgent(db: Db, platformId: string, agentId: string, c: AgentChange): Promise<Agent> {
  const r = await db
    .updateTable("agents")
    .set({
      ...(c.name !== undefined ? { name: c.name } : {}),
      ...(c.isPaused !== undefined ? { is_paused: c.isPaused } : {}),
      ...(c.isConnected !== undefined ? { is_connected: c.isConnected } : {}),
      ...(c.policy !== undefined ? { policy: policyToJson(c.policy) } : {}),
      ...(c.deletedAt !== undefined ? { deleted_at: c.deletedAt } : {}),
      updated_at: c.updatedAt,
    })
    .where("platform_id", "=", platformId)
    .where("id", "=", agentId)
    .returningAll()
    .executeTakeFirstOrThrow();
  return toAgent(r);
}

function filtered(db: Db, f: AgentFilter) {
  let q = db.selectFrom("agents").where("platform_id", "=", f.platformId).where("deleted_at", "is", null);
  if (f.customerId !== undefined) q = q.where("customer_id", "=", f.customerId);
  if (f.isPaused !== undefined) q = q.where("is_paused", "=", f.isPaused);
  return q;
}

export async function listAgents(db: Db, f: AgentFilter, page: ListQuery): Promise<Agent[]> {
  let q = filtered(db, f).selectAll();
  const after = page.after;
  if (after) q = q.where((eb) => eb.or([eb("created_at", "<", after.at), eb.and([eb("created_at", "=", after.at), eb("id", "<", after.id)])]));
  const rows = await q.orderBy("created_at", "desc").orderBy("id", "desc").limit(page.limit).execute();
  return rows.map(toAgent);
}

export async function countAgents(db: Db, f: AgentFilter): Promise<number> {
  const r = await filtered(db, f).select((eb) => eb.fn.countAll<string | number | bigint>().as("n")).executeTakeFirstOrThrow();
  return Number(r.n);
}

/* ---------- device codes ---------- */

function toDeviceCode(r: Selectable<DeviceCodesTable>): DeviceCode {
  return { code: r.code, platformId: r.platform_id, agentId: r.agent_id, expiresAt: r.expires_at, redeemedAt: r.redeemed_at, voidedAt: r.voided_at, createdAt: r.created_at };
}

/** False when the code is taken (codes are drawn at random; the caller draws again). */
export async function insertDeviceCode(db: Db, d: DeviceCode): Promise<boolean> {
  const r = await db
    .insertInto("device_codes")
    .values({ code: d.code, platform_id: d.platformId, agent_id: d.agentId, expires_at: d.expiresAt, redeemed_at: d.redeemedAt, voided_at: d.voidedAt, created_at: d.createdAt })
    .onConflict((oc) => oc.column("code").doNothing())
    .returning("code")
    .executeTakeFirst();
  return r !== undefined;
}

export async function voidOpenDeviceCodes(db: Db, platformId: string, agentId: string, at: Date): Promise<void> {
  await db
    .updateTable("device_codes")
    .set({ voided_at: at })
    .where("platform_id", "=", platformId)
    .where("agent_id", "=", agentId)
    .where("redeemed_at", "is", null)
    .where("voided_at", "is", null)
    .execute();
}

/** By code alone: redeeming names no platform. The code's platform scopes everything after. */
export async function findDeviceCode(db: Db, code: string, opts: { lock?: boolean } = {}): Promise<DeviceCode | undefined> {
  let q = db.selectFrom("device_codes").selectAll().where("code", "=", code);
  if (opts.lock) q = q.forUpdate();
  const r = await q.executeTakeFirst();
  return r && toDeviceCode(r);
}

export async function markDeviceCodeRedeemed(db: Db, code: string, at: Date): Promise<void> {
  await db.updateTable("device_codes").set({ redeemed_at: at }).where("code", "=", code).execute();
}

/* ---------- access tokens ---------- */

export async function insertAccessToken(db: Db, tokenHash: string, platformId: string, agentId: string, at: Date): Promise<void> {
  await db.insertInto("access_tokens").values({ token_hash: tokenHash, platform_id: platformId, agent_id: agentId, created_at: at }).execute();
}

export async function deleteAccessTokens(db: Db, platformId: string, agentId: string): Promise<void> {
  await db.deleteFrom("access_tokens").where("platform_id", "=", platformId).where("agent_id", "=", agentId).execute();
}

/** The live agent a token hash belongs to (the token names its platform through its row). */
export async function agentByTokenHash(db: Db, tokenHash: string): Promise<Agent | undefined> {
  const r = await db
    .selectFrom("access_tokens as t")
    .innerJoin("agents as a", (j) => j.onRef("a.id", "=", "t.agent_id").onRef("a.platform_id", "=", "t.platform_id"))
    .selectAll("a")
    .where("t.token_hash", "=", tokenHash)
    .where("a.deleted_at", "is", null)
    .executeTakeFirst();
  return r && toAgent(r);
}
