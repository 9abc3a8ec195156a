import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { errors, type Clock, type IdempotencyRunner, type Logger, type PlatformTime } from "@corridor/kit";
import { PageInfoSchema, type TimeRange } from "@corridor/proto/corridor/common/v1/paging_pb.js";
import {
  DeliveryAttemptSchema,
  NotificationsService,
  WebhookEventSchema,
  WebhookSettingsSchema,
  type DeliveryAttempt as DeliveryAttemptMessage,
  type WebhookEvent as WebhookEventMessage,
  type WebhookSettings as WebhookSettingsMessage,
} from "@corridor/proto/corridor/notifications/v1/notifications_service_pb.js";
import { sendTestWebhook } from "../domain/delivery.js";
import { getEvent, listEvents, redeliverEvent } from "../domain/events.js";
import { requestIncomingPaymentApproval } from "../domain/incoming-approval.js";
import type { CurrentEndpoint, DeliveryAttempt, DeliveryStore, EventStore, SettingsStore, WebhookEvent, WebhookSender, WebhookSettings } from "../domain/ports.js";
import { GRID_SIGNATURE_ALGORITHM, type SigningKey } from "../domain/grid-webhooks.js";
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
  /** The events API's store; without it the events RPCs are not implemented (tests of other parts). */
  events?: EventStore;
  /** Idempotency-Key handling of RedeliverWebhookEvent (the kit's runner over this schema's keys). */
  idempotent?: IdempotencyRunner;
  /** Tells the delivery worker an event was queued again, so it goes at once. */
  requeued?: (event: { webhookId: string; platformId: string; resourceKey: string | null }) => void;
  /**
   * The time a platform's secret rotation window is set and shown by: a sandbox platform's
   * sandbox clock (POST /sandbox/clock/advance moves it), else the service clock. Default: the clock.
   */
  time?: PlatformTime;
  /** The deployment's X-Grid-Signature key; without it GetWebhookPublicKey is not implemented (tests of other parts). */
  signingKey?: () => Promise<SigningKey>;
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
    id: a.id,
    latencyMs: a.latencyMs ?? undefined,
    responseExcerpt: a.responseExcerpt ?? "",
  });
}

function toEventMessage(e: WebhookEvent & { attempts?: DeliveryAttempt[] }): WebhookEventMessage {
  return create(WebhookEventSchema, {
    id: e.id,
    type: e.type,
    resourceId: e.resourceId ?? "",
    createdAt: timestampFromDate(e.createdAt),
    payload: e.payload,
    deliveryStatus: e.deliveryStatus,
    attemptCount: e.attemptCount,
    lastAttemptAt: e.lastAttemptAt ? timestampFromDate(e.lastAttemptAt) : undefined,
    nextAttemptAt: e.nextAttemptAt ? timestampFromDate(e.nextAttemptAt) : undefined,
    lastError: e.lastError ?? "",
    redeliveredAt: e.redeliveredAt ? timestampFromDate(e.redeliveredAt) : undefined,
    attempts: (e.attempts ?? []).map(toAttemptMessage),
  });
}

function dateOf(t: TimeRange["after"]): Date | undefined {
  return t ? timestampDate(t) : undefined;
}

function requirePlatformId(platformId: string): string {
  if (!platformId) throw errors.invalidInput([{ field: "platform_id", reason: "required" }]);
  return platformId;
}

function requireEventId(eventId: string): string {
  if (!eventId) throw errors.invalidInput([{ field: "event_id", reason: "required" }]);
  return eventId;
}

/** NotificationsService: maps requests onto the domain and its answers back onto proto. */
export function createNotificationsHandler(deps: NotificationsHandlerDeps): ServiceImpl<typeof NotificationsService> {
  const { settings, deliveries } = deps;
  const platformNow = (platformId: string) => (deps.time ? deps.time.now(platformId) : Promise.resolve(deps.clock.now()));
  const eventsOf = (): EventStore => {
    if (!deps.events) throw new Error("the events API is not wired in this process (a composition-root mistake, not a capability a platform lacks)");
    return deps.events;
  };

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
    await applyEndpointCopy(settings, { platformId, webhookEndpoint: current.webhookEndpoint, webhookEventNaming: current.webhookEventNaming, configVersion: current.configVersion, at: deps.clock.now() });
  }

  return {
    async getWebhookPublicKey(req) {
      requirePlatformId(req.platformId);
      if (!deps.signingKey) throw new Error("GetWebhookPublicKey needs the deployment signing key");
      const key = await deps.signingKey();
      return { publicKey: key.publicKeyPem, algorithm: GRID_SIGNATURE_ALGORITHM };
    },
    async getWebhookSettings(req) {
      const platformId = requirePlatformId(req.platformId);
      const now = await platformNow(platformId);
      const s = await ensureSettings(settings, platformId, now);
      return { settings: toSettingsMessage(withoutExpiredPrevious(s, now)) };
    },
    async rotateWebhookSecret(req) {
      const platformId = requirePlatformId(req.platformId);
      const s = await rotateSecret(settings, platformId, await platformNow(platformId));
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
    async listWebhookEvents(req) {
      const platformId = requirePlatformId(req.platformId);
      const page = await listEvents(
        eventsOf(),
        {
          platformId,
          type: req.type || undefined,
          resourceId: req.resourceId || undefined,
          createdAfter: dateOf(req.created?.after),
          createdBefore: dateOf(req.created?.before),
        },
        { limit: req.page?.limit, cursor: req.page?.cursor },
      );
      return {
        events: page.events.map(toEventMessage),
        pageInfo: create(PageInfoSchema, { hasMore: page.hasMore, nextCursor: page.nextCursor ?? "", totalCount: BigInt(page.totalCount) }),
      };
    },
    async getWebhookEvent(req) {
      const event = await getEvent(eventsOf(), requirePlatformId(req.platformId), requireEventId(req.eventId));
      return { event: toEventMessage(event) };
    },
    async redeliverWebhookEvent(req) {
      const platformId = requirePlatformId(req.platformId);
      const eventId = requireEventId(req.eventId);
      if (!deps.idempotent) throw new Error("redelivery is not wired in this process (a composition-root mistake, not a capability a platform lacks)");
      // Like TEST: the endpoint is read first, so a redelivery right after PATCH /config finds it.
      await refreshEndpoint(platformId);
      const { event, replayed } = await redeliverEvent(
        { events: eventsOf(), settings, clock: deps.clock, idempotent: deps.idempotent },
        { platformId, eventId, idempotencyKey: req.idempotencyKey },
      );
      if (!replayed) deps.requeued?.({ webhookId: event.id, platformId, resourceKey: event.resourceId });
      return { event: toEventMessage(event), replayed };
    },
  };
}
