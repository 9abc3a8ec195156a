import type { DeliveryAttempt, DeliveryStore } from "../domain/delivery.js";
import type { Db } from "./tables.js";

/** An attempt as its webhook_deliveries row. */
export function deliveryRow(a: DeliveryAttempt) {
  return {
    id: a.id,
    platform_id: a.platformId,
    webhook_id: a.webhookId,
    type: a.type,
    url: a.url,
    request_body: a.requestBody,
    response_status: a.responseStatus,
    delivered: a.delivered,
    error: a.error,
    attempted_at: a.attemptedAt,
    latency_ms: a.latencyMs,
    response_excerpt: a.responseExcerpt,
  };
}

export async function recordDelivery(db: Db, a: DeliveryAttempt): Promise<void> {
  await db.insertInto("webhook_deliveries").values(deliveryRow(a)).execute();
}

export async function listDeliveries(db: Db, platformId: string): Promise<DeliveryAttempt[]> {
  const rows = await db
    .selectFrom("webhook_deliveries")
    .selectAll()
    .where("platform_id", "=", platformId)
    .orderBy("attempted_at", "desc")
    .orderBy("id", "desc")
    .execute();
  return rows.map((r) => ({
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
  }));
}

export function deliveryStore(db: Db): DeliveryStore {
  return { record: (attempt) => recordDelivery(db, attempt) };
}
