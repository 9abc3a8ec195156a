import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { errors, type Clock } from "@corridor/kit";
import {
  DeliveryAttemptSchema,
  NotificationsService,
  WebhookSettingsSchema,
  type DeliveryAttempt as DeliveryAttemptMessage,
  type WebhookSettings as WebhookSettingsMessage,
} from "@corridor/proto/corridor/notifications/v1/notifications_service_pb.js";
import { deliveryStore } from "../data/deliveries-repo.js";
import { settingsStore } from "../data/settings-repo.js";
import type { Db } from "../data/tables.js";
import { sendTestWebhook, type DeliveryAttempt, type WebhookSender } from "../domain/delivery.js";
import { requestIncomingPaymentApproval } from "../domain/incoming-approval.js";
import { ensureSettings, rotateSecret, withoutExpiredPrevious, type WebhookSettings } from "../domain/settings.js";

export interface NotificationsHandlerDeps {
  db: Db;
  clock: Clock;
  sender: WebhookSender;
}

function toSettingsMessage(s: WebhookSettings): WebhookSettingsMessage {
  return create(WebhookSettingsSchema, {
    platformId: s.platformId,
    webhookEndpoint: s.webhookEndpoint,
    secret: s.secret,
    secretCreatedAt: timestampFromDate(s.secretCreatedAt),
    previousSecretExpiresAt: s.previousSecretExpiresAt ? timestampFromDate(s.previousSecretExpiresAt) : undefined,
    updatedAt: timestampFromDate(s.updatedAt),
  });
}

function toAttemptMessage(a: DeliveryAttempt): DeliveryAttemptMessage {
  return create(DeliveryAttemptSchema, {
    webhookId: a.webhookId,
    type: a.type,
    url: a.url,
    responseStatus: a.responseStatus,
    delivered: a.delivered,
    error: a.error ?? "",
    attemptedAt: timestampFromDate(a.attemptedAt),
  });
}

function requirePlatformId(platformId: string): string {
  if (!platformId) throw errors.invalidInput([{ field: "platform_id", reason: "required" }]);
  return platformId;
}

/** NotificationsService: maps requests onto the domain and its answers back onto proto. */
export function createNotificationsHandler(deps: NotificationsHandlerDeps): ServiceImpl<typeof NotificationsService> {
  const settings = settingsStore(deps.db);
  const deliveries = deliveryStore(deps.db);
  return {
    async getWebhookSettings(req) {
      const now = deps.clock.now();
      const s = await ensureSettings(settings, requirePlatformId(req.platformId), now);
      return { settings: toSettingsMessage(withoutExpiredPrevious(s, now)) };
    },
    async rotateWebhookSecret(req) {
      const s = await rotateSecret(settings, requirePlatformId(req.platformId), deps.clock.now());
      return { settings: toSettingsMessage(s) };
    },
    async sendTestWebhook(req) {
      const attempt = await sendTestWebhook(
        { settings, deliveries, sender: deps.sender, clock: deps.clock },
        requirePlatformId(req.platformId),
      );
      return { attempt: toAttemptMessage(attempt) };
    },
    async requestIncomingPaymentApproval(req) {
      const data = { ...(req.transaction ?? {}), requestedReceiverCustomerInfoFields: req.requestedReceiverCustomerInfoFields };
      const a = await requestIncomingPaymentApproval(
        { settings, deliveries, sender: deps.sender, clock: deps.clock },
        requirePlatformId(req.platformId),
        data,
      );
      return { reply: a.reply, receiverCustomerInfo: a.receiverCustomerInfo as never, attempt: a.attempt ? toAttemptMessage(a.attempt) : undefined };
    },
  };
}
