/**
 * What the notifications domain needs from storage (src/data/) and from other services
 * (src/clients/), and the records those ports carry. Plain TypeScript: tests pass fakes.
 */

import type { WebhookEventNaming } from "./grid-webhooks.js";

/** A platform's webhook set-up as notifications holds it. */
export interface WebhookSettings {
  platformId: string;
  /** Empty when the platform has none configured. */
  webhookEndpoint: string;
  secret: string;
  secretCreatedAt: Date;
  previousSecret: string | null;
  previousSecretExpiresAt: Date | null;
  /** Version (config updated_at, ns since epoch) of the endpoint copy; null until an event set it. */
  configVersion: bigint | null;
  /**
   * When the current endpoint was set: the config version that first carried it. Null when there
   * is none, or for an endpoint set before this was recorded (it receives every event).
   */
  endpointSetAt: Date | null;
  /** How the platform's webhook types are named (its config's webhookEventNaming, copied with the endpoint). */
  webhookEventNaming: WebhookEventNaming;
  updatedAt: Date;
}

/** Where settings are kept; implemented in data/ over the service's schema. */
export interface SettingsStore {
  find(platformId: string): Promise<WebhookSettings | undefined>;
  /** Inserts the row unless one exists already; answers the row that is stored afterwards. */
  insertIfAbsent(settings: WebhookSettings): Promise<WebhookSettings>;
  /**
   * Upserts the endpoint copy, applying it only when `configVersion` is newer than the stored one;
   * `fresh` is the row to insert when the platform has none. `endpointSetAt` is kept when the
   * endpoint is unchanged and taken from `fresh` when it changes. Answers whether it was applied.
   */
  applyEndpoint(update: EndpointUpdate, fresh: WebhookSettings): Promise<boolean>;
  /** Makes `secret` current and the current one previous, atomically for the row. */
  rotate(platformId: string, rotation: Rotation): Promise<WebhookSettings>;
}

export interface EndpointUpdate {
  platformId: string;
  webhookEndpoint: string;
  /** Absent: left as it is (CORRIDOR for a new row). */
  webhookEventNaming?: WebhookEventNaming;
  configVersion: bigint;
  at: Date;
}

export interface Rotation {
  secret: string;
  at: Date;
  previousSecretExpiresAt: Date;
}

/** One recorded POST of a webhook. */
export interface DeliveryAttempt {
  id: string;
  platformId: string;
  webhookId: string;
  type: string;
  url: string;
  requestBody: string;
  /** 0 when no answer came. */
  responseStatus: number;
  delivered: boolean;
  error: string | null;
  attemptedAt: Date;
  /** From sending to the answer's headers (or the failure); null when not measured. */
  latencyMs: number | null;
  /** The start of the answer's body, at most RESPONSE_EXCERPT_CHARS; null when there was none. */
  responseExcerpt: string | null;
}

export interface DeliveryStore {
  record(attempt: DeliveryAttempt): Promise<void>;
}

/** A signed webhook ready to post. */
export interface OutgoingWebhook {
  /** Whose webhook it is: the platform's environment decides what its endpoint may be. */
  platformId: string;
  url: string;
  webhookId: string;
  timestamp: Date;
  body: string;
  /** Every secret that signs it (two during a rotation). */
  secrets: string[];
}

/** How much of an answer's body an attempt keeps (characters). */
export const RESPONSE_EXCERPT_CHARS = 1024;

/**
 * `body` is the reply's text (at most 64 KiB are read), read only when the caller asks for it;
 * `excerpt` its start (at most RESPONSE_EXCERPT_CHARS; at most 4 KiB are read), always read. `latencyMs`: from sending to the
 * answer's headers, or to the failure.
 */
export type SendOutcome = ({ status: number; body?: string; excerpt?: string } | { error: string }) & { latencyMs?: number };

/** Posts a webhook (signing it per Standard Webhooks); never throws for transport failures. */
export interface WebhookSender {
  send(webhook: OutgoingWebhook, opts?: { readBody?: boolean }): Promise<SendOutcome>;
}

/** The platform's current webhook endpoint as auth-sessions holds it, with its config version (src/clients/platform-config.ts). */
export type CurrentEndpoint = (platformId: string) => Promise<{ webhookEndpoint: string; webhookEventNaming?: WebhookEventNaming; configVersion: bigint } | undefined>;

/** An event webhook as the events API shows it (a webhook_queue row and its attempts). */
export interface WebhookEvent {
  /** Webhook:<uuidv7>, the envelope's id. */
  id: string;
  platformId: string;
  type: string;
  /** The resource it is about (data.id, or an invitation's code); null when none. */
  resourceId: string | null;
  createdAt: Date;
  /** The envelope exactly as it is signed and posted. */
  payload: string;
  deliveryStatus: "PENDING" | "DELIVERED" | "FAILED" | "SKIPPED";
  /** Attempts recorded, redeliveries included. */
  attemptCount: number;
  lastAttemptAt: Date | null;
  /** When the next attempt is due; null unless PENDING. */
  nextAttemptAt: Date | null;
  lastError: string | null;
  redeliveredAt: Date | null;
}

export interface EventFilter {
  platformId: string;
  type?: string;
  resourceId?: string;
  createdAfter?: Date;
  createdBefore?: Date;
}

/** The key a redelivery completes in its own transaction, with the answer a replay needs. */
export interface CompletedKey {
  platformId: string;
  key: string;
  requestHash: string;
  status: number;
  body: unknown;
}

/** Where events are read and requeued; implemented in data/ over webhook_queue and webhook_deliveries. */
export interface EventStore {
  /** Newest first (createdAt, then id), strictly after `after` in that order. */
  list(filter: EventFilter, page: { limit: number; after?: { createdAt: Date; id: string } }): Promise<WebhookEvent[]>;
  count(filter: EventFilter): Promise<number>;
  find(platformId: string, eventId: string): Promise<WebhookEvent | undefined>;
  /** Every attempt of the event, oldest first. */
  attempts(platformId: string, eventId: string): Promise<DeliveryAttempt[]>;
  /**
   * Makes the event PENDING and due at `at`, redelivered at `at` (its attempt count for the retry
   * schedule starts again), and completes `key` in the same transaction. False when there is no
   * such event.
   */
  requeue(platformId: string, eventId: string, at: Date, key?: CompletedKey): Promise<boolean>;
}
