import { sql, type Kysely, type Selectable } from "kysely";
import type { Db, NotificationsDatabase, WebhookQueueTable } from "./tables.js";

export type QueuedWebhook = Selectable<WebhookQueueTable>;

/**
 * When the event happened and which resource it is about, read from the envelope when the caller
 * does not say: `timestamp` is the event's occurred time and `data.id` (or an invitation's
 * `data.code`) the resource.
 */
function fromEnvelope(payload: string): { occurredAt?: Date; resourceKey?: string } {
  try {
    const e = JSON.parse(payload) as { timestamp?: unknown; data?: { id?: unknown; code?: unknown } };
    const t = typeof e.timestamp === "string" ? new Date(e.timestamp) : undefined;
    const key = typeof e.data?.id === "string" ? e.data.id : typeof e.data?.code === "string" ? e.data.code : undefined;
    return { occurredAt: t && !Number.isNaN(t.getTime()) ? t : undefined, resourceKey: key || undefined };
  } catch {
    return {};
  }
}

/** Enqueues a webhook for its bus event once: a second call for the same event is a no-op. */
export async function enqueueWebhook(
  db: Db,
  w: {
    webhookId: string;
    platformId: string;
    sourceEventId: string;
    type: string;
    payload: string;
    at: Date;
    /** Defaults to the envelope's timestamp, else `at`. */
    occurredAt?: Date;
    /** Defaults to the envelope's data.id; webhooks of one resource are delivered in order. */
    resourceKey?: string | null;
  },
): Promise<void> {
  const derived = w.occurredAt && w.resourceKey !== undefined ? {} : fromEnvelope(w.payload);
  await db
    .insertInto("webhook_queue")
    .values({
      webhook_id: w.webhookId,
      platform_id: w.platformId,
      source_event_id: w.sourceEventId,
      type: w.type,
      payload: w.payload,
      status: "PENDING",
      attempts: 0,
      next_attempt_at: w.at,
      leased_until: null,
      last_error: null,
      occurred_at: w.occurredAt ?? derived.occurredAt ?? w.at,
      resource_key: w.resourceKey !== undefined ? w.resourceKey : (derived.resourceKey ?? null),
      created_at: w.at,
      updated_at: w.at,
    })
    .onConflict((oc) => oc.column("source_event_id").doNothing())
    .execute();
}

/** The webhooks a bus event enqueued (read in the consumer's own transaction, before it commits). */
export async function webhooksOfEvent(db: Db, sourceEventId: string): Promise<string[]> {
  const rows = await db.selectFrom("webhook_queue").select("webhook_id").where("source_event_id", "=", sourceEventId).execute();
  return rows.map((r) => r.webhook_id);
}

export interface ClaimOptions {
  now: Date;
  /** How long a claimed row stays this worker's: longer than one POST may take. */
  leaseMs: number;
  /** At most this many rows (the worker's free delivery slots). */
  limit: number;
  /** At most this many rows of one platform in flight (leased), counting every worker. */
  perEndpoint: number;
  /** A row waits behind an earlier pending row of its resource until it is this old. */
  orderHoldMs: number;
  /** Webhook ids a consumer announced; answered back in `seen` once their rows are visible. */
  expected?: string[];
}

/** Serialises claims across workers on one database, so the per-endpoint count is exact. */
const CLAIM_LOCK = sql`select pg_advisory_xact_lock(hashtext('corridor.notifications.webhook_queue.claim'))`;

/**
 * Takes due rows in a short transaction of its own and leases them (`leased_until`); the POSTs
 * then run outside any transaction. A row is due when it is PENDING, its `next_attempt_at` has
 * come and nobody holds a live lease on it, and either no earlier row (by `seq`) of the same
 * resource is still PENDING or it has waited `orderHoldMs` since it was enqueued. Rows are taken
 * oldest first, at most `perEndpoint` in flight per platform and `limit` in all. Claims are
 * serialised by an advisory lock (the in-flight count must not race) and read with
 * `for update skip locked`, so two workers never lease the same row.
 */
export async function claimDue(db: Kysely<NotificationsDatabase>, o: ClaimOptions): Promise<{ rows: QueuedWebhook[]; seen: string[] }> {
  return db.transaction().execute(async (trx) => {
    const expected = o.expected ?? [];
    const seen = expected.length
      ? (await trx.selectFrom("webhook_queue").select("webhook_id").where("webhook_id", "in", expected).execute()).map((r) => r.webhook_id)
      : [];
    if (o.limit <= 0) return { rows: [], seen };
    await CLAIM_LOCK.execute(trx);

    const busy = new Map<string, number>();
    const leased = await trx
      .selectFrom("webhook_queue")
      .select(["platform_id", (eb) => eb.fn.countAll<string | number | bigint>().as("n")])
      .where("leased_until", "is not", null)
      .where("leased_until", ">", o.now)
      .where("status", "=", "PENDING")
      .groupBy("platform_id")
      .execute();
    for (const r of leased) busy.set(r.platform_id, Number(r.n));
    const full = [...busy].filter(([, n]) => n >= o.perEndpoint).map(([p]) => p);

    const holdEdge = new Date(o.now.getTime() - o.orderHoldMs);
    const candidates = await trx
      .selectFrom("webhook_queue as q")
      .selectAll("q")
      .where("q.status", "=", "PENDING")
      .where("q.next_attempt_at", "<=", o.now)
      .where((eb) => eb.or([eb("q.leased_until", "is", null), eb("q.leased_until", "<=", o.now)]))
      .$if(full.length > 0, (qb) => qb.where("q.platform_id", "not in", full))
      .where((eb) =>
        eb.or([
          eb("q.resource_key", "is", null),
          eb("q.created_at", "<=", holdEdge),
          eb.not(
            eb.exists(
              eb
                .selectFrom("webhook_queue as e")
                .select(sql.lit(1).as("one"))
                .whereRef("e.platform_id", "=", "q.platform_id")
                .whereRef("e.resource_key", "=", "q.resource_key")
                .whereRef("e.seq", "<", "q.seq")
                .where("e.status", "=", "PENDING"),
            ),
          ),
        ]),
      )
      .orderBy("q.seq")
      // Look past one busy platform's backlog so the others are not starved behind it.
      .limit(Math.max(o.limit * 4, o.perEndpoint * 4, 100))
      .forUpdate()
      .skipLocked()
      .execute();

    const rows: QueuedWebhook[] = [];
    for (const row of candidates) {
      if (rows.length >= o.limit) break;
      const n = busy.get(row.platform_id) ?? 0;
      if (n >= o.perEndpoint) continue;
      busy.set(row.platform_id, n + 1);
      rows.push(row);
    }
    if (rows.length === 0) return { rows, seen };
    const leasedUntil = new Date(o.now.getTime() + o.leaseMs);
    await trx
      .updateTable("webhook_queue")
      .set({ leased_until: leasedUntil })
      .where(
        "webhook_id",
        "in",
        rows.map((r) => r.webhook_id),
      )
      .execute();
    return { rows: rows.map((r) => ({ ...r, leased_until: leasedUntil })), seen };
  });
}

/**
 * The next time a PENDING row may become due by itself after `now`: a retry's (or a recheck's)
 * `next_attempt_at`, a lease running out (a worker that died), or a waiting row reaching its
 * order hold. Rows that wait for a delivery in flight become due when it settles instead.
 */
export async function nextDueAt(db: Db, now: Date, orderHoldMs: number): Promise<Date | undefined> {
  const holdEdge = new Date(now.getTime() - orderHoldMs);
  const row = await db
    .selectNoFrom((eb) => [
      eb
        .selectFrom("webhook_queue")
        .select((e) => e.fn.min("next_attempt_at").as("t"))
        .where("status", "=", "PENDING")
        .where("next_attempt_at", ">", now)
        .as("retry"),
      eb
        .selectFrom("webhook_queue")
        .select((e) => e.fn.min("leased_until").as("t"))
        .where("leased_until", "is not", null)
        .where("leased_until", ">", now)
        .where("status", "=", "PENDING")
        .as("lease"),
      eb
        .selectFrom("webhook_queue")
        .select((e) => e.fn.min("created_at").as("t"))
        .where("status", "=", "PENDING")
        .where("resource_key", "is not", null)
        .where("created_at", ">", holdEdge)
        .as("held"),
    ])
    .executeTakeFirst();
  const times = [row?.retry, row?.lease, row?.held ? new Date(new Date(row.held).getTime() + orderHoldMs) : undefined]
    .filter((t): t is Date => t != null)
    .map((t) => new Date(t).getTime());
  return times.length ? new Date(Math.min(...times)) : undefined;
}

/** Writes what followed an attempt (or a wait for an endpoint, or a skip) and releases the lease. */
export async function settleWebhook(
  db: Db,
  platformId: string,
  webhookId: string,
  change: { status: WebhookQueueTable["status"]; attempts: number; nextAttemptAt?: Date; lastError: string | null; at: Date },
): Promise<void> {
  await db
    .updateTable("webhook_queue")
    .set({
      status: change.status,
      attempts: change.attempts,
      ...(change.nextAttemptAt ? { next_attempt_at: change.nextAttemptAt } : {}),
      last_error: change.lastError,
      leased_until: null,
      updated_at: change.at,
    })
    .where("platform_id", "=", platformId)
    .where("webhook_id", "=", webhookId)
    .execute();
}

export async function findQueued(db: Db, platformId: string, webhookId: string): Promise<QueuedWebhook | undefined> {
  return db.selectFrom("webhook_queue").selectAll().where("platform_id", "=", platformId).where("webhook_id", "=", webhookId).executeTakeFirst();
}

export async function listQueued(db: Db, platformId: string): Promise<QueuedWebhook[]> {
  return db.selectFrom("webhook_queue").selectAll().where("platform_id", "=", platformId).orderBy("seq").execute();
}
