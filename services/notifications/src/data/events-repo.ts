import { completeIdempotencyKey } from "@corridor/kit";
import type { Kysely, Selectable } from "kysely";
import type { CompletedKey, DeliveryAttempt, EventFilter, EventStore, WebhookEvent } from "../domain/ports.js";
import type { NotificationsDatabase, WebhookDeliveriesTable } from "./tables.js";

/** The event columns of webhook_queue with its attempt count and last attempt (from webhook_deliveries). */
function eventsQuery(db: Kysely<NotificationsDatabase>, filter: EventFilter) {
  return db
    .selectFrom("webhook_queue as q")
    .select([
      "q.webhook_id",
      "q.platform_id",
      "q.type",
      "q.resource_key",
      "q.created_at",
      "q.payload",
      "q.status",
      "q.next_attempt_at",
      "q.last_error",
      "q.redelivered_at",
    ])
    .select((eb) => [
      eb
        .selectFrom("webhook_deliveries as d")
        .select((e) => e.fn.countAll<string | number | bigint>().as("n"))
        .whereRef("d.platform_id", "=", "q.platform_id")
        .whereRef("d.webhook_id", "=", "q.webhook_id")
        .as("attempt_count"),
      eb
        .selectFrom("webhook_deliveries as d")
        .select((e) => e.fn.max("d.attempted_at").as("t"))
        .whereRef("d.platform_id", "=", "q.platform_id")
        .whereRef("d.webhook_id", "=", "q.webhook_id")
        .as("last_attempt_at"),
    ])
    .where("q.platform_id", "=", filter.platformId)
    .$if(filter.type !== undefined, (qb) => qb.where("q.type", "=", filter.type!))
    .$if(filter.resourceId !== undefined, (qb) => qb.where("q.resource_key", "=", filter.resourceId!))
    .$if(filter.createdAfter !== undefined, (qb) => qb.where("q.created_at", ">=", filter.createdAfter!))
    .$if(filter.createdBefore !== undefined, (qb) => qb.where("q.created_at", "<=", filter.createdBefore!));
}

type EventRow = Awaited<ReturnType<ReturnType<typeof eventsQuery>["executeTakeFirstOrThrow"]>>;

function toEvent(r: EventRow): WebhookEvent {
  return {
    id: r.webhook_id,
    platformId: r.platform_id,
    type: r.type,
    resourceId: r.resource_key,
    createdAt: r.created_at,
    payload: r.payload,
    deliveryStatus: r.status,
    attemptCount: Number(r.attempt_count ?? 0),
    lastAttemptAt: r.last_attempt_at == null ? null : new Date(r.last_attempt_at),
    nextAttemptAt: r.status === "PENDING" ? r.next_attempt_at : null,
    lastError: r.last_error,
    redeliveredAt: r.redelivered_at,
  };
}

function toAttempt(r: Selectable<WebhookDeliveriesTable>): DeliveryAttempt {
  return {
    id: r.id,
    platformId: r.platform_id,
    webhookId: r.webhook_id,
    type: r.type,
    url: r.url,
    requestBody: r.request_body,
    responseStatus: r.response_status,
    delivered: r.delivered,
    error: r.error,
    attemptedAt: r.attempted_at,
    latencyMs: r.latency_ms,
    responseExcerpt: r.response_excerpt,
  };
}

/** The events API's reads and the redelivery, over webhook_queue and webhook_deliveries. */
export function eventStore(db: Kysely<NotificationsDatabase>): EventStore {
  return {
    async list(filter, page) {
      const after = page.after;
      const rows = await eventsQuery(db, filter)
        .$if(after !== undefined, (qb) =>
          qb.where((eb) => eb.or([eb("q.created_at", "<", after!.createdAt), eb.and([eb("q.created_at", "=", after!.createdAt), eb("q.webhook_id", "<", after!.id)])])),
        )
        .orderBy("q.created_at", "desc")
        .orderBy("q.webhook_id", "desc")
        .limit(page.limit)
        .execute();
      return rows.map(toEvent);
    },
    async count(filter) {
      const row = await db
        .selectFrom("webhook_queue as q")
        .select((eb) => eb.fn.countAll<string | number | bigint>().as("n"))
        .where("q.platform_id", "=", filter.platformId)
        .$if(filter.type !== undefined, (qb) => qb.where("q.type", "=", filter.type!))
        .$if(filter.resourceId !== undefined, (qb) => qb.where("q.resource_key", "=", filter.resourceId!))
        .$if(filter.createdAfter !== undefined, (qb) => qb.where("q.created_at", ">=", filter.createdAfter!))
        .$if(filter.createdBefore !== undefined, (qb) => qb.where("q.created_at", "<=", filter.createdBefore!))
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },
    async find(platformId, eventId) {
      const row = await eventsQuery(db, { platformId }).where("q.webhook_id", "=", eventId).executeTakeFirst();
      return row && toEvent(row);
    },
    async attempts(platformId, eventId) {
      const rows = await db
        .selectFrom("webhook_deliveries")
        .selectAll()
        .where("platform_id", "=", platformId)
        .where("webhook_id", "=", eventId)
        .orderBy("attempted_at", "asc")
        .orderBy("id", "asc")
        .execute();
      return rows.map(toAttempt);
    },
    async requeue(platformId, eventId, at, key?: CompletedKey) {
      return db.transaction().execute(async (trx) => {
        // A row with an attempt in flight keeps its lease: that attempt settles it (and is the
        // redelivery); any other row is due at `at`.
        const res = await trx
          .updateTable("webhook_queue")
          .set({ status: "PENDING", attempts: 0, next_attempt_at: at, last_error: null, redelivered_at: at, updated_at: at })
          .where("platform_id", "=", platformId)
          .where("webhook_id", "=", eventId)
          .executeTakeFirst();
        if (Number(res.numUpdatedRows) !== 1) return false;
        if (key) await completeIdempotencyKey(trx, key);
        return true;
      });
    },
  };
}
