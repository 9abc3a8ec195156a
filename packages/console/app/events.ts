// The events API (GET /events, GET /events/{id}, POST /events/{id}/redeliver): every webhook
// event the platform was sent, with its delivery attempts. The console reads it for the webhooks
// page and for a transaction's timeline and the webhooks it caused.
import type { Api, Page } from "./api.js";

export interface DeliveryAttempt {
  id?: string;
  url?: string;
  responseStatus?: number;
  delivered?: boolean;
  error?: string;
  attemptedAt: string;
  latencyMs?: number;
  responseExcerpt?: string;
}

export interface WebhookEvent {
  id: string;
  type: string;
  resourceId?: string;
  createdAt: string;
  /** The envelope as posted: {id, type, timestamp, data}. */
  payload?: unknown;
  deliveryStatus?: string;
  attemptCount?: number;
  lastAttemptAt?: string;
  nextAttemptAt?: string;
  lastError?: string;
  redeliveredAt?: string;
  attempts?: DeliveryAttempt[];
}

/** The envelope's `data` (the resource as its GET returns it), whichever way the payload came. */
export function eventData(event: WebhookEvent): Record<string, unknown> | undefined {
  let payload: unknown = event.payload;
  if (typeof payload === "string") {
    try {
      payload = JSON.parse(payload);
    } catch {
      return undefined;
    }
  }
  const data = (payload as { data?: unknown } | undefined)?.data;
  return data && typeof data === "object" ? (data as Record<string, unknown>) : undefined;
}

/** The payload as a value to show (parsed when it came as JSON text). */
export function eventPayload(event: WebhookEvent): unknown {
  if (typeof event.payload !== "string") return event.payload;
  try {
    return JSON.parse(event.payload);
  } catch {
    return event.payload;
  }
}

export interface EventFilters {
  type?: string;
  resourceId?: string;
  createdAfter?: string;
  createdBefore?: string;
}

export function listEvents(api: Api, filters: EventFilters, cursor?: string, limit = 20): Promise<Page<WebhookEvent>> {
  return api<Page<WebhookEvent>>("GET", "/events", { query: { ...filters, cursor, limit } });
}

export function getEvent(api: Api, id: string): Promise<WebhookEvent> {
  return api<WebhookEvent>("GET", `/events/${encodeURIComponent(id)}`);
}

export function redeliverEvent(api: Api, id: string, idempotencyKey: string): Promise<unknown> {
  return api("POST", `/events/${encodeURIComponent(id)}/redeliver`, { idempotencyKey });
}

/** Every event about one resource, oldest first (pages through them; a resource has few). */
export async function eventsFor(api: Api, resourceId: string): Promise<WebhookEvent[]> {
  const out: WebhookEvent[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 10; i++) {
    const page = await listEvents(api, { resourceId }, cursor, 100);
    out.push(...page.data);
    if (!page.hasMore || !page.nextCursor) break;
    cursor = page.nextCursor;
  }
  return out.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
}
