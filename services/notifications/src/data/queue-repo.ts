import type { Kysely, Selectable } from "kysely";
import type { Db, NotificationsDatabase, WebhookQueueTable } from "./tables.js";

export type QueuedWebhook = Selectable<WebhookQueueTable>;

/** Enqueues a webhook for its bus event once: a second call for the same event is a no-op. */
export async function enqueueWebhook(
  db: Db,
  w: { webhookId: string; platformId: string; sourceEventId: string; type: string; payload: string; at: Date },
): Promise<void> {
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
      created_at: w.at,
      updated_at: w.at,
    })
    .onConflict((oc) => oc.column("source_event_id").doNothing())
    .execute();
}

/**
 * Takes up to `limit` due rows in a short transaction of its own: `for update skip locked` keeps
 * concurrent workers off each other's rows, and the lease keeps them off after the commit while
 * the POST runs outside any transaction.
 */
export async function leaseDue(db: Kysely<NotificationsDatabase>, now: Date, leaseMs: number, limit: number): Promise<QueuedWebhook[]> {
  return db.transaction().execute(async (trx) => {
    const rows = await trx
      .selectFrom("webhook_queue")
      .selectAll()
      .where("status", "=", "PENDING")
      .where("next_attempt_at", "<=", now)
      .where((eb) => eb.or([eb("leased_until", "is", null), eb("leased_until", "<=", now)]))
      .orderBy("next_attempt_at")
      .limit(limit)
      .forUpdate()
      .skipLocked()
      .execute();
    if (rows.length === 0) return [];
    const leasedUntil = new Date(now.getTime() + leaseMs);
    await trx
      .updateTable("webhook_queue")
      .set({ leased_until: leasedUntil })
      .where(
        "webhook_id",
        "in",
        rows.map((r) => r.webhook_id),
      )
      .execute();
    return rows;
  });
}

/** Writes what followed an attempt (or a wait for an endpoint) and releases the lease. */
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
  return db.selectFrom("webhook_queue").selectAll().where("platform_id", "=", platformId).orderBy("created_at").orderBy("webhook_id").execute();
}
