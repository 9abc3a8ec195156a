import type { DeliveryAttempt, WebhookEvent } from "@corridor/proto/corridor/notifications/v1/notifications_service_pb.js";
import { emptyToUndefined, isoFromTimestamp, optionalIso } from "./time.js";

// The events API's JSON (GET /events, GET /events/{id}, POST /events/{id}/redeliver; docs/events.md).

/** The webhook's JSON body as it was signed and posted (notifications stores the exact text). */
function payloadOf(e: WebhookEvent): Record<string, unknown> {
  const parsed: unknown = JSON.parse(e.payload);
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) throw new Error(`event ${e.id} has a payload that is not a JSON object`);
  return parsed as Record<string, unknown>;
}

/** An Event as GET /events lists it. */
export function eventToJson(e: WebhookEvent | undefined) {
  if (!e) throw new Error("service answered without an event");
  return {
    id: e.id,
    type: e.type,
    resourceId: emptyToUndefined(e.resourceId),
    createdAt: isoFromTimestamp(e.createdAt),
    deliveryStatus: e.deliveryStatus,
    attemptCount: e.attemptCount,
    lastAttemptAt: optionalIso(e.lastAttemptAt),
    nextAttemptAt: optionalIso(e.nextAttemptAt),
    lastError: emptyToUndefined(e.lastError),
    redeliveredAt: optionalIso(e.redeliveredAt),
    payload: payloadOf(e),
  };
}

/** One delivery attempt of an event. */
export function eventAttemptToJson(a: DeliveryAttempt) {
  return {
    id: a.id,
    attemptedAt: isoFromTimestamp(a.attemptedAt),
    url: a.url,
    responseStatus: a.responseStatus,
    delivered: a.delivered,
    latencyMs: a.latencyMs,
    responseExcerpt: emptyToUndefined(a.responseExcerpt),
    error: emptyToUndefined(a.error),
  };
}

/** An Event with every attempt, oldest first (GET /events/{id}, POST /events/{id}/redeliver). */
export function eventWithAttemptsToJson(e: WebhookEvent | undefined) {
  const event = eventToJson(e);
  return { ...event, attempts: e!.attempts.map(eventAttemptToJson) };
}
