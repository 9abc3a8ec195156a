import type { DeliveryAttempt, WebhookSettings } from "@corridor/proto/corridor/notifications/v1/notifications_service_pb.js";
import { emptyToUndefined, isoFromTimestamp, optionalIso } from "@corridor/kit/rest-json";

export function webhookSecretToJson(s: WebhookSettings | undefined) {
  if (!s) throw new Error("service answered without webhook settings");
  return {
    secret: s.secret,
    createdAt: isoFromTimestamp(s.secretCreatedAt),
    previousSecretExpiresAt: optionalIso(s.previousSecretExpiresAt),
  };
}

export function deliveryAttemptToJson(a: DeliveryAttempt | undefined) {
  if (!a) throw new Error("service answered without a delivery attempt");
  return {
    id: a.webhookId,
    type: a.type,
    url: a.url,
    responseStatus: a.responseStatus,
    delivered: a.delivered,
    error: emptyToUndefined(a.error),
    attemptedAt: isoFromTimestamp(a.attemptedAt),
    // Grid's TestWebhookResponse names (snake case there).
    response_status: a.responseStatus,
    response_body: a.responseExcerpt,
  };
}
