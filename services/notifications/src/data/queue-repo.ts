import { sql, type ExpressionBuilder, type Kysely, type Selectable } from "kysely";
import type { DeliveryAttempt } from "../domain/delivery.js";
import type { WebhookSettings } from "../domain/ports.js";
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
    const e = JSON.parse(payload) as { timestamp?: unknown; data?: { id?: unknown; code?: unknown; jobId?: unknown } };
    const t = typeof e.timestamp === "string" ? new Date(e.timestamp) : undefined;
    // data.id, an invitation's code, a bulk import's jobId.
    const key = typeof e.data?.id === "string" ? e.data.id : typeof e.data?.code === "string" ? e.data.code : typeof e.data?.jobId === "string" ? e.data.jobId : undefined;
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
  /** When its event occurred (the envelope's timestamp); lets the worker batch a platform without endpoint. */
  occurredAt?: Date;
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

/** A webhook to store for its bus event: what enqueueWebhook and recordSkipped write. */
export interface NewWebhook {
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
}

/** The queue row of a webhook: PENDING, or SKIPPED with its reason as the worker settles one (never attempted). */
function queueRow(w: NewWebhook, skipped: string | undefined) {
  const derived = w.occurredAt && w.resourceKey !== undefined ? {} : fromEnvelope(w.payload);
  const resourceKey = w.resourceKey !== undefined ? w.resourceKey : (derived.resourceKey ?? null);
  const occurredAt = w.occurredAt ?? derived.occurredAt ?? w.at;
  return {
    webhook_id: w.webhookId,
    platform_id: w.platformId,
    source_event_id: w.sourceEventId,
    type: w.type,
    payload: w.payload,
    status: skipped === undefined ? ("PENDING" as const) : ("SKIPPED" as const),
    attempts: 0,
    next_attempt_at: w.at,
    leased_until: null,
    last_error: skipped ?? null,
    occurred_at: occurredAt,
    resource_key: resourceKey,
    created_at: w.at,
    updated_at: w.at,
  };
}

/** Enqueues a webhook for its bus event once: a second call for the same event is a no-op. */
export async function enqueueWebhook(
  db: Db,
  w: NewWebhook & {
    /**
     * The reason it is never to be sent, when that is already known (see EndpointCopy.skipAtEnqueue):
     * the row is stored SKIPPED at once, as the worker would have settled it, and not announced.
     */
    skipped?: string;
  },
): Promise<void> {
  const row = queueRow(w, w.skipped);
  const inserted = await db
    .insertInto("webhook_queue")
    .values(row)
    .onConflict((oc) => oc.column("source_event_id").doNothing())
    .executeTakeFirst();
  if (w.skipped === undefined && Number(inserted.numInsertedOrUpdatedRows ?? 0n) > 0) {
    const list = enqueuedIn.get(db) ?? [];
    list.push({ webhookId: w.webhookId, platformId: w.platformId, resourceKey: row.resource_key, occurredAt: row.occurred_at });
    enqueuedIn.set(db, list);
  }
}

/**
 * Stores webhooks that are never to be sent SKIPPED (`reason`), in one multi-row INSERT outside
 * any transaction (autocommit): the rows the worker would have settled SKIPPED, readable through
 * the events API (decisions §8), never announced to it. Once per event: the queue row is unique
 * per source event (ON CONFLICT DO NOTHING), so a redelivery, or a row the event already has
 * (enqueued PENDING by an earlier delivery), is left as it is. No statement for none.
 */
export async function recordSkipped(db: Db, webhooks: NewWebhook[], reason: string): Promise<void> {
  if (webhooks.length === 0) return;
  // One row per event even when the bus delivered it twice in the batch.
  const once = new Map(webhooks.map((w) => [w.sourceEventId, w]));
  await db
    .insertInto("webhook_queue")
    .values([...once.values()].map((w) => queueRow(w, reason)))
    .onConflict((oc) => oc.column("source_event_id").doNothing())
    .execute();
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

/** A claimed row (leased to the worker that claimed it). */
export type ClaimedWebhook = QueuedWebhook;

/** What a claim answers: the rows, the announced ids now visible, and the settings of each claimed row's platform. */
export interface Claim {
  rows: ClaimedWebhook[];
  seen: string[];
  /** Platform → its webhook_settings row as the claim read it (undefined: none), for every platform in `rows`. */
  settings: Map<string, WebhookSettings | undefined>;
}

/** The settings columns a claim returns beside each row (prefixed, so they cannot clash with the queue's). */
const SETTINGS_COLUMNS = [
  "ps.platform_id as s_platform_id",
  "ps.webhook_endpoint as s_webhook_endpoint",
  "ps.secret as s_secret",
  "ps.secret_created_at as s_secret_created_at",
  "ps.previous_secret as s_previous_secret",
  "ps.previous_secret_expires_at as s_previous_secret_expires_at",
  "ps.config_version as s_config_version",
  "ps.endpoint_set_at as s_endpoint_set_at",
  "ps.webhook_event_naming as s_webhook_event_naming",
  "ps.updated_at as s_updated_at",
] as const;

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
export async function claimDue(db: Kysely<NotificationsDatabase>, o: ClaimOptions): Promise<Claim> {
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
    if (o.limit <= 0) return { rows: [], seen, settings: new Map() };
    // A look at announced rows none of which is visible yet (their transaction has not
    // committed): nothing to claim, so no claiming statement.
    if (o.only !== undefined) {
      const visible = new Set(seen);
      if (!o.only.some((id) => visible.has(id))) return { rows: [], seen, settings: new Map() };
    }

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
          .select(["cand.webhook_id", "cand.platform_id", "cand.seq"])
          // This platform's place in the batch after the rows it already has in flight.
          .select(sql<number>`row_number() over (partition by ${sql.ref("cand.platform_id")} order by ${sql.ref("cand.seq")}) + coalesce(${sql.ref("busy.n")}, 0)`.as("slot")),
      )
      .with("picked", (q) =>
        q.selectFrom("ranked").select(["ranked.webhook_id", "ranked.platform_id"]).where("ranked.slot", "<=", o.perEndpoint).orderBy("ranked.seq").limit(o.limit),
      )
      // Each row's platform settings come back with it: no read of its own per claim.
      .with("ps", (q) => q.selectFrom("webhook_settings").selectAll().where("platform_id", "in", (eb) => eb.selectFrom("picked").select("picked.platform_id")))
      .updateTable("webhook_queue")
      .from("picked")
      .leftJoin("ps", "ps.platform_id", "picked.platform_id")
      .set({ leased_until: leasedUntil })
      .whereRef("webhook_queue.webhook_id", "=", "picked.webhook_id")
      .returningAll("webhook_queue")
      .returning(SETTINGS_COLUMNS)
      .execute();
    const settings = new Map<string, WebhookSettings | undefined>();
    const claimed: ClaimedWebhook[] = rows.map(({ s_platform_id, s_webhook_endpoint, s_secret, s_secret_created_at, s_previous_secret, s_previous_secret_expires_at, s_config_version, s_endpoint_set_at, s_webhook_event_naming, s_updated_at, ...row }) => {
      if (!settings.has(row.platform_id)) {
        settings.set(
          row.platform_id,
          s_platform_id === null
            ? undefined
            : {
                platformId: s_platform_id,
                webhookEndpoint: s_webhook_endpoint!,
                secret: s_secret!,
                secretCreatedAt: s_secret_created_at!,
                previousSecret: s_previous_secret,
                previousSecretExpiresAt: s_previous_secret_expires_at,
                configVersion: s_config_version,
                endpointSetAt: s_endpoint_set_at,
                webhookEventNaming: s_webhook_event_naming === "GRID" ? "GRID" : "CORRIDOR",
                updatedAt: s_updated_at!,
              },
        );
      }
      return row;
    });
    claimed.sort((a, b) => (a.seq < b.seq ? -1 : a.seq > b.seq ? 1 : 0));
    return { rows: claimed, seen, settings };
  });
}

/**
 * Settles announced webhooks of a platform that has no endpoint in one statement: SKIPPED ("no
 * webhookEndpoint was set when it occurred"), as the worker settles each of them one by one. Only
 * rows still PENDING, not leased by a worker, whose event (or redelivery) happened at or before
 * `asOf` — when auth-sessions said the platform had no endpoint — and only while the settings
 * still hold none. Answers the ids it settled; the others are left to the worker.
 */
export async function skipWithoutEndpoint(db: Db, o: { platformId: string; webhookIds: string[]; asOf: Date; now: Date; reason: string }): Promise<string[]> {
  if (o.webhookIds.length === 0) return [];
  const rows = await db
    .updateTable("webhook_queue")
    .set({ status: "SKIPPED", last_error: o.reason, leased_until: null, updated_at: o.now })
    .where("platform_id", "=", o.platformId)
    .where("webhook_id", "in", o.webhookIds)
    .where("status", "=", "PENDING")
    .where((eb) => eb.or([eb("leased_until", "is", null), eb("leased_until", "<=", o.now)]))
    .where((eb) => eb(eb.fn.coalesce("redelivered_at", "occurred_at"), "<=", o.asOf))
    .where((eb) =>
      eb.not(eb.exists(eb.selectFrom("webhook_settings").select(sql.lit(1).as("one")).where("webhook_settings.platform_id", "=", o.platformId).where("webhook_settings.webhook_endpoint", "!=", ""))),
    )
    .returning("webhook_id")
    .execute();
  return rows.map((r) => r.webhook_id);
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
    .executeTakeFirst();
}

/** The next webhook of `settled`'s resource if it is due, free and the earliest pending (ignoring `except`). */
function nextOfResource(db: Db, settled: QueuedWebhook, now: Date, except?: string) {
  return db
    .selectFrom("webhook_queue as q")
    .select("q.webhook_id")
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
  return (await lookWhenIdle(db, now, orderHoldMs, false)).next;
}

/**
 * What an idle worker needs to know, in one statement: whether a row is due now that a claim
 * would take (PENDING, due, not leased, not waiting behind an earlier pending row of its resource
 * within the order hold; the per-endpoint bound aside), and otherwise the next time one may become
 * due by itself (nextDueAt).
 */
export async function lookWhenIdle(db: Db, now: Date, orderHoldMs: number, withDue = true): Promise<{ due: boolean; next?: Date }> {
  const holdEdge = new Date(now.getTime() - orderHoldMs);
  const row = await db
    .selectNoFrom((eb) => [
      withDue
        ? eb
            .exists(
              eb
                .selectFrom("webhook_queue as q")
                .select(sql.lit(1).as("one"))
                .where("q.status", "=", "PENDING")
                .where("q.next_attempt_at", "<=", now)
                .where((e) => e.or([e("q.leased_until", "is", null), e("q.leased_until", "<=", now)]))
                .where((e) => e.or([e("q.resource_key", "is", null), e("q.created_at", "<=", holdEdge), e.not(earlierPending(e))])),
            )
            .as("due")
        : sql<boolean>`false`.as("due"),
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
  return { due: Boolean(row?.due), next: times.length ? new Date(Math.min(...times)) : undefined };
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
