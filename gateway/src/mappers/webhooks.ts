import type { WebhookSettings } from "@corridor/proto/corridor/notifications/v1/notifications_service_pb.js";
import { isoFromTimestamp, optionalIso } from "@corridor/kit/rest-json";

export function webhookSecretToJson(s: WebhookSettings | undefined) {
  if (!s) throw new Error("service answered without webhook settings");
  return {
    secret: s.secret,
    createdAt: isoFromTimestamp(s.secretCreatedAt),
    previousSecretExpiresAt: optionalIso(s.previousSecretExpiresAt),
  };
}
