import { sql, type Kysely, type Selectable, type Transaction } from "kysely";
import type { OutcomePayload, SandboxDatabase, ScheduledActionsTable } from "./tables.js";

type Db = Kysely<SandboxDatabase> | Transaction<SandboxDatabase>;
export type ScheduledAction = Selectable<ScheduledActionsTable>;

export async function clockOffsetMs(db: Db, platformId: string): Promise<bigint> {
  const row = await db.selectFrom("clocks").select("offset_ms").where("platform_id", "=", platformId).executeTakeFirst();
  return row?.offset_ms ?? 0n;
}

/**
 * Adds to the platform's offset (concurrent advances add up) and records the new offset with the
 * real time it starts at, inside the caller's transaction (which also announces the move).
 */
export async function addClockOffset(trx: Transaction<SandboxDatabase>, platformId: string, ms: bigint, now: Date): Promise<bigint> {
  const row = await trx
    .insertInto("clocks")
    .values({ platform_id: platformId, offset_ms: ms, updated_at: now })
    .onConflict((oc) => oc.column("platform_id").doUpdateSet({ offset_ms: sql`clocks.offset_ms + excluded.offset_ms`, updated_at: now }))
    .returning("offset_ms")
    .executeTakeFirstOrThrow();
  await trx.insertInto("clock_advances").values({ platform_id: platformId, at: now, offset_ms: row.offset_ms }).execute();
  return row.offset_ms;
}

/** The platform's offset in effect at a past real time (0 before its first advance). */
export async function clockOffsetAt(db: Db, platformId: string, realAt: Date): Promise<bigint> {
  const row = await db
    .selectFrom("clock_advances")
    .select("offset_ms")
    .where("platform_id", "=", platformId)
    .where("at", "<=", realAt)
    .orderBy("at", "desc")
    .orderBy("id", "desc")
    .limit(1)
    .executeTakeFirst();
  return row?.offset_ms ?? 0n;
}

/** clockOffsetMs and clockOffsetAt in one statement (an instruction needs both). */
export async function clockOffsetsNowAndAt(db: Db, platformId: string, realAt: Date): Promise<{ now: bigint; at: bigint }> {
  const row = await db
    .selectNoFrom((eb) => [
      eb.selectFrom("clocks").select("offset_ms").where("platform_id", "=", platformId).as("now"),
      eb.selectFrom("clock_advances").select("offset_ms").where("platform_id", "=", platformId).where("at", "<=", realAt).orderBy("at", "desc").orderBy("id", "desc").limit(1).as("at"),
    ])
    .executeTakeFirst();
  return { now: BigInt(row?.now ?? 0), at: BigInt(row?.at ?? 0) };
}

export async function scheduleOutcome(db: Db, a: { platformId: string; dueAt: Date; payload: OutcomePayload; now: Date }): Promise<void> {
  await db
    .insertInto("scheduled_actions")
    .values({ platform_id: a.platformId, due_at: a.dueAt, kind: "RAIL_OUTCOME", payload: JSON.stringify(a.payload), status: "PENDING", created_at: a.now, fired_at: null })
    .execute();
}

/** Whether any action is still pending, due or not (the partial index answers it). */
export async function anyPending(db: Db): Promise<boolean> {
  const row = await db.selectFrom("scheduled_actions").select("id").where("status", "=", "PENDING").limit(1).executeTakeFirst();
  return row !== undefined;
}

/** Pending actions whose due time has come on their platform's sandbox clock (real now + offset). */
export async function dueActions(db: Db, realNow: Date, platformId?: string, limit = 100): Promise<ScheduledAction[]> {
  let q = db
    .selectFrom("scheduled_actions as a")
    .leftJoin("clocks as c", "c.platform_id", "a.platform_id")
    .selectAll("a")
    .where("a.status", "=", "PENDING")
    .where(sql<boolean>`a.due_at <= ${realNow.toISOString()}::timestamptz + (coalesce(c.offset_ms, 0) * interval '1 millisecond')`);
  if (platformId) q = q.where("a.platform_id", "=", platformId);
  return q.orderBy("a.due_at").orderBy("a.id").limit(limit).execute();
}

/** Marks the action fired; false when someone else fired it first. */
export async function claimAction(trx: Transaction<SandboxDatabase>, id: bigint, now: Date): Promise<boolean> {
  const row = await trx
    .updateTable("scheduled_actions")
    .set({ status: "FIRED", fired_at: now })
    .where("id", "=", id)
    .where("status", "=", "PENDING")
    .returning("id")
    .executeTakeFirst();
  return row !== undefined;
}
