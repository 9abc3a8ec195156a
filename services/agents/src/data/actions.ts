import { sql, type Selectable } from "kysely";
import type { Action, ActionStatus, ActionType, ExecutionState, FailureReason, TransactionFacts } from "../domain/model.js";
import type { ActionFilter, ListQuery, UsageRow } from "../domain/ports.js";
import type { Db } from "./agents.js";
import type { ActionsTable } from "./tables.js";

/** Actions, usage windows and early ledger outcomes over Kysely; every statement scoped by platform. */

const bytes = (b: Uint8Array | null): Uint8Array | null => (b ? new Uint8Array(b) : null);

function toAction(r: Selectable<ActionsTable>): Action {
  return {
    id: r.id,
    platformId: r.platform_id,
    agentId: r.agent_id,
    customerId: r.customer_id,
    platformCustomerId: r.platform_customer_id,
    type: r.type as ActionType,
    status: r.status as ActionStatus,
    quoteId: r.quote_id,
    transactionId: r.transaction_id,
    amount: r.amount,
    currency: r.currency,
    sourceAccountId: r.source_account_id,
    destinationAccountId: r.destination_account_id,
    description: r.description,
    countedAmount: r.counted_amount,
    dayKey: r.day_key,
    monthKey: r.month_key,
    executionState: r.execution_state as ExecutionState,
    executionClaimedAt: r.execution_claimed_at,
    rejectionReason: r.rejection_reason,
    failureReason: r.failure_reason as FailureReason | "",
    failureMessage: r.failure_message,
    expiresAt: r.expires_at,
    quoteSnapshot: bytes(r.quote_snapshot),
    transactionSnapshot: bytes(r.transaction_snapshot),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** The columns that change after insert. */
const mutable = (a: Action) => ({
  status: a.status,
  // An approval under another policy than the submission's moves the reservation (docs/agents.md "Approval").
  counted_amount: a.countedAmount,
  transaction_id: a.transactionId,
  execution_state: a.executionState,
  execution_claimed_at: a.executionClaimedAt,
  rejection_reason: a.rejectionReason,
  failure_reason: a.failureReason,
  failure_message: a.failureMessage,
  quote_snapshot: a.quoteSnapshot,
  transaction_snapshot: a.transactionSnapshot,
  updated_at: a.updatedAt,
});

export async function insertAction(db: Db, a: Action): Promise<void> {
  await db
    .insertInto("actions")
    .values({
      id: a.id,
      platform_id: a.platformId,
      agent_id: a.agentId,
      customer_id: a.customerId,
      platform_customer_id: a.platformCustomerId,
      type: a.type,
      quote_id: a.quoteId,
      amount: a.amount,
      currency: a.currency,
      source_account_id: a.sourceAccountId,
      destination_account_id: a.destinationAccountId,
      description: a.description,
      day_key: a.dayKey,
      month_key: a.monthKey,
      expires_at: a.expiresAt,
      created_at: a.createdAt,
      ...mutable(a),
    })
    .execute();
}

export async function saveAction(db: Db, a: Action): Promise<void> {
  await db.updateTable("actions").set(mutable(a)).where("platform_id", "=", a.platformId).where("id", "=", a.id).execute();
}

export async function saveTransactionSnapshot(db: Db, platformId: string, actionId: string, snapshot: Uint8Array): Promise<void> {
  await db.updateTable("actions").set({ transaction_snapshot: snapshot }).where("platform_id", "=", platformId).where("id", "=", actionId).execute();
}

export async function findAction(db: Db, platformId: string, actionId: string, opts: { lock?: boolean } = {}): Promise<Action | undefined> {
  let q = db.selectFrom("actions").selectAll().where("platform_id", "=", platformId).where("id", "=", actionId);
  if (opts.lock) q = q.forUpdate();
  const r = await q.executeTakeFirst();
  return r && toAction(r);
}

export async function lockPendingActions(db: Db, platformId: string, agentId: string): Promise<Action[]> {
  const rows = await db
    .selectFrom("actions")
    .selectAll()
    .where("platform_id", "=", platformId)
    .where("agent_id", "=", agentId)
    .where("status", "=", "PENDING_APPROVAL")
    .orderBy("id")
    .forUpdate()
    .execute();
  return rows.map(toAction);
}

export async function liveActionForQuote(db: Db, platformId: string, quoteId: string): Promise<Action | undefined> {
  const r = await db
    .selectFrom("actions")
    .selectAll()
    .where("platform_id", "=", platformId)
    .where("quote_id", "=", quoteId)
    .where("status", "in", ["PENDING_APPROVAL", "APPROVED"])
    .executeTakeFirst();
  return r && toAction(r);
}

export async function actionByTransaction(db: Db, platformId: string, transactionId: string): Promise<Action | undefined> {
  const r = await db.selectFrom("actions").selectAll().where("platform_id", "=", platformId).where("transaction_id", "=", transactionId).executeTakeFirst();
  return r && toAction(r);
}

function filtered(db: Db, f: ActionFilter) {
  let q = db.selectFrom("actions").where("platform_id", "=", f.platformId);
  if (f.agentId !== undefined) q = q.where("agent_id", "=", f.agentId);
  if (f.customerId !== undefined) q = q.where("customer_id", "=", f.customerId);
  if (f.status !== undefined) q = q.where("status", "=", f.status);
  if (f.createdFrom !== undefined) q = q.where("created_at", ">=", f.createdFrom);
  if (f.createdTo !== undefined) q = q.where("created_at", "<=", f.createdTo);
  return q;
}

export async function listActions(db: Db, f: ActionFilter, page: ListQuery): Promise<Action[]> {
  let q = filtered(db, f).selectAll();
  const after = page.after;
  const cmp = page.ascending ? ">" : "<";
  if (after) q = q.where((eb) => eb.or([eb("created_at", cmp, after.at), eb.and([eb("created_at", "=", after.at), eb("id", cmp, after.id)])]));
  const dir = page.ascending ? "asc" : "desc";
  const rows = await q.orderBy("created_at", dir).orderBy("id", dir).limit(page.limit).execute();
  return rows.map(toAction);
}

export async function countActions(db: Db, f: ActionFilter): Promise<number> {
  const r = await filtered(db, f).select((eb) => eb.fn.countAll<string | number | bigint>().as("n")).executeTakeFirstOrThrow();
  return Number(r.n);
}

export async function staleExecutions(db: Db, staleBefore: Date, limit: number): Promise<Action[]> {
  const rows = await db
    .selectFrom("actions")
    .selectAll()
    .where("execution_state", "=", "EXECUTING")
    .where("execution_claimed_at", "<", staleBefore)
    .orderBy("execution_claimed_at")
    .limit(limit)
    .execute();
  return rows.map(toAction);
}

/** Moves a stale claim to `at` if nobody moved it since it was read (one statement). */
export async function reclaimExecution(db: Db, a: Action, at: Date): Promise<boolean> {
  if (!a.executionClaimedAt) return false;
  const r = await db
    .updateTable("actions")
    .set({ execution_claimed_at: at })
    .where("platform_id", "=", a.platformId)
    .where("id", "=", a.id)
    .where("status", "=", "APPROVED")
    .where("execution_state", "=", "EXECUTING")
    .where("execution_claimed_at", "=", a.executionClaimedAt)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

export async function platformsWithExpiringActions(db: Db): Promise<string[]> {
  const rows = await db
    .selectFrom("actions")
    .select("platform_id")
    .distinct()
    .where("status", "=", "PENDING_APPROVAL")
    .where("expires_at", "is not", null)
    .execute();
  return rows.map((r) => r.platform_id);
}

export async function expiredPendingActions(db: Db, platformId: string, now: Date, limit: number): Promise<Action[]> {
  const rows = await db
    .selectFrom("actions")
    .selectAll()
    .where("platform_id", "=", platformId)
    .where("status", "=", "PENDING_APPROVAL")
    .where("expires_at", "<=", now)
    .orderBy("expires_at")
    .limit(limit)
    .execute();
  return rows.map(toAction);
}

/* ---------- usage windows ---------- */

export async function usageOf(db: Db, platformId: string, agentIds: string[], dayKey: string, monthKey: string): Promise<Map<string, UsageRow>> {
  const out = new Map<string, UsageRow>();
  if (agentIds.length === 0) return out;
  const rows = await db
    .selectFrom("usage")
    .selectAll()
    .where("platform_id", "=", platformId)
    .where("agent_id", "in", agentIds)
    .where((eb) => eb.or([eb.and([eb("window_kind", "=", "DAY"), eb("window_key", "=", dayKey)]), eb.and([eb("window_kind", "=", "MONTH"), eb("window_key", "=", monthKey)])]))
    .execute();
  for (const r of rows) {
    const u = out.get(r.agent_id) ?? { dayCount: 0n, dayAmount: 0n, monthAmount: 0n };
    if (r.window_kind === "DAY") {
      u.dayCount = r.count;
      u.dayAmount = r.amount;
    } else {
      u.monthAmount = r.amount;
    }
    out.set(r.agent_id, u);
  }
  return out;
}

/** Adds (sign 1) or gives back (sign -1) one action's count and amount in its day and month. */
export async function changeUsage(
  db: Db,
  a: { platformId: string; agentId: string; dayKey: string; monthKey: string; countedAmount: bigint },
  sign: 1n | -1n,
): Promise<void> {
  for (const [kind, key] of [
    ["DAY", a.dayKey],
    ["MONTH", a.monthKey],
  ] as const) {
    await db
      .insertInto("usage")
      .values({ platform_id: a.platformId, agent_id: a.agentId, window_kind: kind, window_key: key, count: sign > 0n ? 1n : 0n, amount: sign > 0n ? a.countedAmount : 0n })
      .onConflict((oc) =>
        oc.columns(["platform_id", "agent_id", "window_kind", "window_key"]).doUpdateSet({
          count: sql`usage.count + ${sign}`,
          amount: sql`usage.amount + ${sign * a.countedAmount}`,
        }),
      )
      .execute();
  }
}

/* ---------- early ledger outcomes ---------- */

/**
 * Serializes the consumer of one ledger transaction's events with the recorder of the execution
 * that made it, for the rest of the transaction (no row exists to lock before both have written).
 */
export async function lockTransactionKey(db: Db, platformId: string, transactionId: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`${platformId}/${transactionId}`}, 0))`.execute(db);
}

export async function earlyOutcome(db: Db, platformId: string, transactionId: string): Promise<TransactionFacts | undefined> {
  const r = await db.selectFrom("transaction_outcomes").selectAll().where("platform_id", "=", platformId).where("transaction_id", "=", transactionId).executeTakeFirst();
  return r && { id: r.transaction_id, status: r.status, agentId: "", failureReason: r.failure_reason, snapshot: new Uint8Array(r.snapshot) };
}

export async function recordEarlyOutcome(db: Db, platformId: string, t: TransactionFacts, at: Date): Promise<void> {
  await db
    .insertInto("transaction_outcomes")
    .values({ platform_id: platformId, transaction_id: t.id, status: t.status, failure_reason: t.failureReason, snapshot: t.snapshot, recorded_at: at })
    .onConflict((oc) => oc.columns(["platform_id", "transaction_id"]).doUpdateSet({ status: t.status, failure_reason: t.failureReason, snapshot: t.snapshot, recorded_at: at }))
    .execute();
}

export async function pruneEarlyOutcomes(db: Db, before: Date): Promise<number> {
  const r = await db.deleteFrom("transaction_outcomes").where("recorded_at", "<", before).executeTakeFirst();
  return Number(r.numDeletedRows);
}
