import { v7 as uuidv7 } from "uuid";
import { AppError, newId, type Clock } from "@corridor/kit";
import { RESPONSE_EXCERPT_CHARS, type DeliveryAttempt, type DeliveryStore, type SendOutcome, type SettingsStore, type WebhookSender, type WebhookSettings } from "./ports.js";
import { ensureSettings, signingSecrets, versionDate } from "./settings.js";

export type { DeliveryAttempt, DeliveryStore, OutgoingWebhook, SendOutcome, WebhookSender } from "./ports.js";

/** The webhook envelope of decisions §8. */
export interface WebhookEnvelope<Data> {
  id: string;
  type: string;
  timestamp: string;
  data: Data;
}

/** What an attempt records of a POST's outcome: status (0 without an answer), error, latency, the start of the answer. */
export function outcomeFields(outcome: SendOutcome): Pick<DeliveryAttempt, "responseStatus" | "error" | "latencyMs" | "responseExcerpt"> {
  const answered = "status" in outcome;
  const excerpt = answered ? (outcome.excerpt ?? outcome.body?.slice(0, RESPONSE_EXCERPT_CHARS)) : undefined;
  return {
    responseStatus: answered ? outcome.status : 0,
    error: answered ? null : outcome.error,
    latencyMs: outcome.latencyMs ?? null,
    responseExcerpt: excerpt ? excerpt : null,
  };
}

export const TEST_WEBHOOK_MESSAGE = "This is a test webhook from Corridor.";

export function testEnvelope(platformId: string, webhookId: string, now: Date): WebhookEnvelope<{ platformId: string; message: string }> {
  return { id: webhookId, type: "TEST", timestamp: now.toISOString(), data: { platformId, message: TEST_WEBHOOK_MESSAGE } };
}

export function endpointNotConfigured(): AppError {
  return new AppError("INVALID", "WEBHOOK_ENDPOINT_NOT_SET", "The platform has no webhookEndpoint configured; set it in the platform's config");
}

/** Posts a signed TEST event to the platform's endpoint once and records the attempt. */
export async function sendTestWebhook(
  deps: { settings: SettingsStore; deliveries: DeliveryStore; sender: WebhookSender; clock: Clock },
  platformId: string,
): Promise<DeliveryAttempt> {
  const now = deps.clock.now();
  const settings = await ensureSettings(deps.settings, platformId, now);
  if (!settings.webhookEndpoint) throw endpointNotConfigured();

  const webhookId = newId("Webhook");
  const body = JSON.stringify(testEnvelope(platformId, webhookId, now));
  const outcome = await deps.sender.send({
    platformId,
    url: settings.webhookEndpoint,
    webhookId,
    timestamp: now,
    body,
    secrets: signingSecrets(settings, now),
  });
  const attempt: DeliveryAttempt = {
    id: uuidv7(),
    platformId,
    webhookId,
    type: "TEST",
    url: settings.webhookEndpoint,
    requestBody: body,
    ...outcomeFields(outcome),
    delivered: "status" in outcome && outcome.status >= 200 && outcome.status < 300,
    attemptedAt: now,
  };
  await deps.deliveries.record(attempt);
  return attempt;
}

/**
 * How long an event webhook that found no endpoint in the copy waits for one when auth-sessions
 * cannot be asked: the config event that set the endpoint just before the event may still be on
 * its way. After that the webhook is SKIPPED.
 */
export const NO_ENDPOINT_GRACE_MS = 5 * 60_000;

/** Where an event webhook goes, decided from the endpoint copy and when the event occurred. */
export type EndpointVerdict =
  | { kind: "deliver"; url: string }
  /** Never sent: recorded as SKIPPED with the reason (the event stays stored). */
  | { kind: "skip"; reason: string }
  /** The copy has no endpoint but may be behind the platform's config: ask, or wait a little. */
  | { kind: "unknown" };

/**
 * Decisions §8: an endpoint receives the events that occur after it is set. An event that
 * occurred before the current endpoint was set (first set, or changed to another URL) is not
 * released to it; with no endpoint, an event is skipped once the copy is known to be at least as
 * recent as the event (a later endpoint would be set after it occurred).
 */
export function endpointVerdict(settings: WebhookSettings | undefined, occurredAt: Date): EndpointVerdict {
  if (settings?.webhookEndpoint) {
    if (settings.endpointSetAt && occurredAt.getTime() < settings.endpointSetAt.getTime()) {
      return { kind: "skip", reason: "occurred before the webhookEndpoint was set" };
    }
    return { kind: "deliver", url: settings.webhookEndpoint };
  }
  if (settings?.configVersion != null && versionDate(settings.configVersion).getTime() >= occurredAt.getTime()) {
    return { kind: "skip", reason: "no webhookEndpoint was set when it occurred" };
  }
  return { kind: "unknown" };
}
