import { decodeKeysetCursor, errors, pageSize, toPage, type Clock, type IdempotencyRunner } from "@corridor/kit";
import type { DeliveryAttempt, EventFilter, EventStore, SettingsStore, WebhookEvent } from "./ports.js";
import { ensureSettings } from "./settings.js";

export type { EventFilter, EventStore, WebhookEvent } from "./ports.js";

/**
 * The events API (an extension of the contract, docs/events.md): the event webhooks a platform
 * was (or would be) sent, their delivery attempts, and redelivery to the current endpoint.
 */

export interface EventPage {
  events: WebhookEvent[];
  hasMore: boolean;
  nextCursor?: string;
  totalCount: number;
}

/** A page of the platform's events, newest first (createdAt, then id). */
export async function listEvents(store: EventStore, filter: EventFilter, page: { limit?: number; cursor?: string }): Promise<EventPage> {
  const limit = pageSize(page.limit);
  const pos = decodeKeysetCursor(page.cursor, "timestamp");
  const [rows, totalCount] = await Promise.all([store.list(filter, { limit: limit + 1, after: pos && { createdAt: pos.k, id: pos.id } }), store.count(filter)]);
  const built = toPage(rows, limit, (e) => ({ k: e.createdAt.toISOString(), id: e.id }), totalCount);
  return { events: built.data, hasMore: built.hasMore, nextCursor: built.nextCursor, totalCount };
}

/** One event with its attempts (oldest first); another platform's event is not found. */
export async function getEvent(store: EventStore, platformId: string, eventId: string): Promise<WebhookEvent & { attempts: DeliveryAttempt[] }> {
  const event = await store.find(platformId, eventId);
  if (!event) throw errors.notFound("Event", eventId);
  return { ...event, attempts: await store.attempts(platformId, eventId) };
}

export function endpointNotSet() {
  return errors.badRequest("WEBHOOK_ENDPOINT_NOT_SET", "The platform has no webhookEndpoint to redeliver to; set one with PATCH /config first");
}

/**
 * Queues the event again for the platform's current endpoint: it becomes PENDING, due at once,
 * with the same id and body (signed afresh on every attempt); its retries follow the usual schedule
 * counted from now, and it goes to the endpoint current now even when the event occurred before
 * that endpoint was set. Without an endpoint it is INVALID (WEBHOOK_ENDPOINT_NOT_SET, Grid's 400) and
 * nothing changes. Under an Idempotency-Key the first redelivery is answered again (the event as it
 * is now) instead of queueing another.
 */
export async function redeliverEvent(
  deps: { events: EventStore; settings: SettingsStore; clock: Clock; idempotent: IdempotencyRunner },
  req: { platformId: string; eventId: string; idempotencyKey: string },
): Promise<{ event: WebhookEvent & { attempts: DeliveryAttempt[] }; replayed: boolean }> {
  const { platformId, eventId } = req;
  const { replayed } = await deps.idempotent(
    { platformId, key: req.idempotencyKey, request: { redeliver: eventId }, checkKey: true },
    async (key) => {
      const now = deps.clock.now();
      if (!(await deps.events.find(platformId, eventId))) throw errors.notFound("Event", eventId);
      const settings = await ensureSettings(deps.settings, platformId, now);
      if (!settings.webhookEndpoint) throw endpointNotSet();
      // Never earlier than the endpoint's own start (the config's clock may run a little ahead).
      const at = settings.endpointSetAt && settings.endpointSetAt.getTime() > now.getTime() ? settings.endpointSetAt : now;
      const done = await deps.events.requeue(platformId, eventId, at, key && { ...key, status: 202, body: { eventId } });
      if (!done) throw errors.notFound("Event", eventId);
    },
    () => undefined,
  );
  return { event: await getEvent(deps.events, platformId, eventId), replayed };
}
