import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { errors, type Clock, type Logger } from "@corridor/kit";
import {
  DeliveryAttemptSchema,
  NotificationsService,
  WebhookSettingsSchema,
  type DeliveryAttempt as DeliveryAttemptMessage,
  type WebhookSettings as WebhookSettingsMessage,
} from "@corridor/proto/corridor/notifications/v1/notifications_service_pb.js";
import { sendTestWebhook } from "../domain/delivery.js";
import { requestIncomingPaymentApproval } from "../domain/incoming-approval.js";
import type { CurrentEndpoint, DeliveryAttempt, DeliveryStore, SettingsStore, WebhookSender, WebhookSettings } from "../domain/ports.js";
import { applyEndpointCopy, ensureSettings, rotateSecret, withoutExpiredPrevious } from "../domain/settings.js";

export interface NotificationsHandlerDeps {
  settings: SettingsStore;
  deliveries: DeliveryStore;
  clock: Clock;
  sender: WebhookSender;
  /**
   * The platform's current webhook endpoint as auth-sessions holds it, with its config version.
   * Calls made on a platform's request (TEST, the incoming approval) read it first, so a webhook
   * sent right after the platform's config changed goes to the new endpoint rather than waiting
   * for the config event to arrive. Event webhooks keep using the copy the events maintain.
   */
  currentEndpoint?: CurrentEndpoint;
  log?: Pick<Logger, "warn">;
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
  const { settings, deliveries } = deps;

  /**
   * Brings the local copy of the endpoint up to auth-sessions' current config (versioned like the
   * event consumer's updates, so an older answer never replaces a newer copy). When auth-sessions
   * cannot answer, the local copy is used as it is.
   */
  async function refreshEndpoint(platformId: string): Promise<void> {
    if (!deps.currentEndpoint) return;
    let current: Awaited<ReturnType<CurrentEndpoint>>;
    try {
      current = await deps.currentEndpoint(platformId);
    } catch (err) {
      deps.log?.warn({ err, platformId }, "could not read the platform's config; using the local copy of its webhook endpoint");
      return;
    }
    if (!current) return;
    await applyEndpointCopy(settings, { platformId, webhookEndpoint: current.webhookEndpoint, configVersion: current.configVersion, at: deps.clock.now() });
  }

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
      const platformId = requirePlatformId(req.platformId);
      await refreshEndpoint(platformId);
      const attempt = await sendTestWebhook({ settings, deliveries, sender: deps.sender, clock: deps.clock }, platformId);
      return { attempt: toAttemptMessage(attempt) };
    },
    async requestIncomingPaymentApproval(req) {
      const data = { ...(req.transaction ?? {}), requestedReceiverCustomerInfoFields: req.requestedReceiverCustomerInfoFields };
      const platformId = requirePlatformId(req.platformId);
      await refreshEndpoint(platformId);
      const a = await requestIncomingPaymentApproval({ settings, deliveries, sender: deps.sender, clock: deps.clock }, platformId, data);
      return { reply: a.reply, receiverCustomerInfo: a.receiverCustomerInfo as never, attempt: a.attempt ? toAttemptMessage(a.attempt) : undefined };
    },
  };
}
