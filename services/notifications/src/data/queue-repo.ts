import { sql, type ExpressionBuilder, type Kysely, type Selectable, type SqlBool } from "kysely";
import type { DeliveryAttempt } from "../domain/delivery.js";
import { deliveryRow } from "./deliveries-repo.js";
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

/** A webhook just enqueued, as announced to the delivery worker. */
export interface EnqueuedWebhook {
  webhookId: string;
  platformId: string;
  resourceKey: string | null;
}

/**
 * Webhooks enqueued in each (consumer) transaction, so the consumer's wrapper can announce them
 * to the delivery worker without another query. Keyed by the transaction object, and dropped with
 * it.
 */
const enqueuedIn = new WeakMap<object, EnqueuedWebhook[]>();

/** The webhooks enqueued so far in this transaction (none for a duplicate event). */
export function webhooksEnqueuedIn(trx: object): EnqueuedWebhook[] {
  return enqueuedIn.get(trx) ?? [];
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
  const resourceKey = w.resourceKey !== undefined ? w.resourceKey : (derived.resourceKey ?? null);
  const inserted = await db
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
      resource_key: resourceKey,
      created_at: w.at,
      updated_at: w.at,
    })
    .onConflict((oc) => oc.column("source_event_id").doNothing())
    .executeTakeFirst();
  if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) > 0) {
    const list = enqueuedIn.get(db) ?? [];
    list.push({ webhookId: w.webhookId, platformId: w.platformId, resourceKey });
    enqueuedIn.set(db, list);
  }
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
  /** Only these rows are considered (announced ones): found by key, however long the queue. */
  only?: string[];
}

/** A claimed row; `has_next`: a later webhook of its resource was pending when it was claimed. */
export type ClaimedWebhook = QueuedWebhook & { has_next: SqlBool };

/** Serialises claims across workers on one database, so the per-endpoint count is exact. */
const CLAIM_LOCK = sql<unknown>`pg_advisory_xact_lock(hashtext('corridor.notifications.webhook_queue.claim'))`;

/**
 * Takes due rows in a short transaction of its own and leases them (`leased_until`); the POSTs
 * then run outside any transaction. A row is due when it is PENDING, its `next_attempt_at` has
 * come and nobody holds a live lease on it, and either no earlier row (by `seq`) of the same
 * resource is still PENDING or it has waited `orderHoldMs` since it was enqueued. Rows are taken
 * oldest first, at most `perEndpoint` in flight per platform (rows already leased count) and
 * `limit` in all, in one statement. Claims are serialised by an advisory lock taken in a statement
 * of its own, so the claiming statement's snapshot sees every earlier claim and the in-flight count
 * cannot race; rows are read `for update skip locked`, so two workers never lease the same row.
 */
export async function claimDue(db: Kysely<NotificationsDatabase>, o: ClaimOptions): Promise<{ rows: ClaimedWebhook[]; seen: string[] }> {
  return db.transaction().execute(async (trx) => {
    // The lock, and which announced rows are visible: anything seen here is visible to the claim
    // that follows (its snapshot is later), so an announced row is never seen yet missed.
    const expected = o.expected ?? [];
    const seenRows = await trx
      .selectNoFrom((eb) => [
        CLAIM_LOCK.as("locked"),
        expected.length
          ? eb.fn<string[]>("array", [eb.selectFrom("webhook_queue").select("webhook_id").where("webhook_id", "in", expected)]).as("seen")
          : sql<string[]>`'{}'::text[]`.as("seen"),
      ])
      .executeTakeFirstOrThrow();
    const seen = seenRows.seen ?? [];
    if (o.limit <= 0) return { rows: [], seen };

    const holdEdge = new Date(o.now.getTime() - o.orderHoldMs);
    const leasedUntil = new Date(o.now.getTime() + o.leaseMs);
    const rows = await trx
      .with("busy", (q) =>
        q
          .selectFrom("webhook_queue")
          .select(["platform_id", (eb) => eb.fn.countAll().as("n")])
          .where("leased_until", "is not", null)
          .where("leased_until", ">", o.now)
          .where("status", "=", "PENDING")
          .groupBy("platform_id"),
      )
      .with("cand", (q) =>
        q
          .selectFrom("webhook_queue as q")
          .select(["q.webhook_id", "q.platform_id", "q.seq"])
          .select((eb) => hasNext(eb).as("has_next"))
          .$if(o.only !== undefined, (qb) => qb.where("q.webhook_id", "in", o.only!.length ? o.only! : [""]))
          .where("q.status", "=", "PENDING")
          .where("q.next_attempt_at", "<=", o.now)
          .where((eb) => eb.or([eb("q.leased_until", "is", null), eb("q.leased_until", "<=", o.now)]))
          .where((eb) => eb("q.platform_id", "not in", eb.selectFrom("busy").select("busy.platform_id").where("busy.n", ">=", o.perEndpoint)))
          .where((eb) => eb.or([eb("q.resource_key", "is", null), eb("q.created_at", "<=", holdEdge), eb.not(earlierPending(eb))]))
          .orderBy("q.seq")
          // Look past one busy platform's backlog so the others are not starved behind it.
          .limit(Math.max(o.limit * 4, o.perEndpoint * 4, 100))
          .forUpdate()
          .skipLocked(),
      )
      .with("ranked", (q) =>
        q
          .selectFrom("cand")
          .leftJoin("busy", "busy.platform_id", "cand.platform_id")
          .select(["cand.webhook_id", "cand.seq", "cand.has_next"])
          // This platform's place in the batch after the rows it already has in flight.
          .select(sql<number>`row_number() over (partition by ${sql.ref("cand.platform_id")} order by ${sql.ref("cand.seq")}) + coalesce(${sql.ref("busy.n")}, 0)`.as("slot")),
      )
      .with("picked", (q) => q.selectFrom("ranked").select(["ranked.webhook_id", "ranked.has_next"]).where("ranked.slot", "<=", o.perEndpoint).orderBy("ranked.seq").limit(o.limit))
      .updateTable("webhook_queue")
      .from("picked")
      .set({ leased_until: leasedUntil })
      .whereRef("webhook_queue.webhook_id", "=", "picked.webhook_id")
      .returningAll("webhook_queue")
      .returning("picked.has_next")
      .execute();
    rows.sort((a, b) => (a.seq < b.seq ? -1 : a.seq > b.seq ? 1 : 0));
    return { rows, seen };
  });
}

/** The queue under the alias `q`, for the shared subqueries below. */
type WithQ = NotificationsDatabase & { q: WebhookQueueTable };

/** Whether an earlier row (by seq) of q's resource is still PENDING (other than `except`). */
function earlierPending(eb: ExpressionBuilder<WithQ, "q">, except?: string) {
  return eb.exists(
    eb
      .selectFrom("webhook_queue as e")
      .select(sql.lit(1).as("one"))
      .whereRef("e.platform_id", "=", "q.platform_id")
      .whereRef("e.resource_key", "=", "q.resource_key")
      .whereRef("e.seq", "<", "q.seq")
      .where("e.status", "=", "PENDING")
      .$if(except !== undefined, (qb) => qb.where("e.webhook_id", "!=", except!)),
  );
}

/** Whether a later row (by seq) of q's resource is PENDING. */
function hasNext(eb: ExpressionBuilder<WithQ, "q">) {
  return eb.exists(
    eb
      .selectFrom("webhook_queue as s")
      .select(sql.lit(1).as("one"))
      .whereRef("s.platform_id", "=", "q.platform_id")
      .whereRef("s.resource_key", "=", "q.resource_key")
      .whereRef("s.seq", ">", "q.seq")
      .where("s.status", "=", "PENDING"),
  );
}

/**
 * Settles a row that leaves PENDING (as settleWebhook) and hands its slot to the next webhook of
 * the same resource when that one is due, free and then the earliest pending of its resource: it
 * is leased and answered, so the worker posts it at once instead of waiting for the next claim.
 * The platform's in-flight count does not change (one lease ends, one begins). With an attempt to
 * record it is one statement, which reads the rows as they were before it: the settled row is
 * left out of "an earlier webhook of this resource is pending" by id.
 */
export async function settleAndTakeNext(
  db: Db,
  settled: QueuedWebhook,
  change: SettleChange,
  attempt: DeliveryAttempt | undefined,
  lease: { now: Date; leaseMs: number },
): Promise<ClaimedWebhook | undefined> {
  if (settled.resource_key === null || !attempt) {
    await settleWebhook(db, settled.platform_id, settled.webhook_id, change, attempt);
    if (settled.resource_key === null) return undefined;
    return db
      .with("nxt", () => nextOfResource(db, settled, lease.now))
      .updateTable("webhook_queue")
      .from("nxt")
      .set({ leased_until: new Date(lease.now.getTime() + lease.leaseMs) })
      .whereRef("webhook_queue.webhook_id", "=", "nxt.webhook_id")
      .returningAll("webhook_queue")
      .returning("nxt.has_next")
      .executeTakeFirst();
  }
  return db
    .with("settled", (q) =>
      q.updateTable("webhook_queue").set(settleSet(change)).where("platform_id", "=", settled.platform_id).where("webhook_id", "=", settled.webhook_id).returning("webhook_id"),
    )
    .with("attempt", (q) => q.insertInto("webhook_deliveries").values(deliveryRow(attempt)))
    .with("nxt", () => nextOfResource(db, settled, lease.now, settled.webhook_id))
    .updateTable("webhook_queue")
    .from("nxt")
    .set({ leased_until: new Date(lease.now.getTime() + lease.leaseMs) })
    .whereRef("webhook_queue.webhook_id", "=", "nxt.webhook_id")
    .returningAll("webhook_queue")
    .returning("nxt.has_next")
    .executeTakeFirst();
}

/** The next webhook of `settled`'s resource if it is due, free and the earliest pending (ignoring `except`). */
function nextOfResource(db: Db, settled: QueuedWebhook, now: Date, except?: string) {
  return db
    .selectFrom("webhook_queue as q")
    .select("q.webhook_id")
    .select((eb) => hasNext(eb).as("has_next"))
    .where("q.platform_id", "=", settled.platform_id)
    .where("q.resource_key", "=", settled.resource_key!)
    .where("q.status", "=", "PENDING")
    .where("q.seq", ">", settled.seq)
    .where("q.next_attempt_at", "<=", now)
    .where((eb) => eb.or([eb("q.leased_until", "is", null), eb("q.leased_until", "<=", now)]))
    .where((eb) => eb.not(earlierPending(eb, except)))
    .orderBy("q.seq")
    .limit(1)
    .forUpdate()
    .skipLocked();
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

export interface SettleChange {
  status: WebhookQueueTable["status"];
  attempts: number;
  nextAttemptAt?: Date;
  lastError: string | null;
  at: Date;
}

function settleSet(change: SettleChange) {
  return {
    status: change.status,
    attempts: change.attempts,
    ...(change.nextAttemptAt ? { next_attempt_at: change.nextAttemptAt } : {}),
    last_error: change.lastError,
    leased_until: null,
    updated_at: change.at,
  };
}

/**
 * Writes what followed an attempt (or a wait for an endpoint, or a skip) and releases the lease;
 * with `attempt`, records it in webhook_deliveries in the same statement.
 */
export async function settleWebhook(db: Db, platformId: string, webhookId: string, change: SettleChange, attempt?: DeliveryAttempt): Promise<void> {
  const set = settleSet(change);
  const update = attempt
    ? db.with("attempt", (q) => q.insertInto("webhook_deliveries").values(deliveryRow(attempt))).updateTable("webhook_queue")
    : db.updateTable("webhook_queue");
  await update.set(set).where("platform_id", "=", platformId).where("webhook_id", "=", webhookId).execute();
}

export async function findQueued(db: Db, platformId: string, webhookId: string): Promise<QueuedWebhook | undefined> {
  return db.selectFrom("webhook_queue").selectAll().where("platform_id", "=", platformId).where("webhook_id", "=", webhookId).executeTakeFirst();
}

export async function listQueued(db: Db, platformId: string): Promise<QueuedWebhook[]> {
  return db.selectFrom("webhook_queue").selectAll().where("platform_id", "=", platformId).orderBy("seq").execute();
}
