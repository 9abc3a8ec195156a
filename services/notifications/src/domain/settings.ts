import { randomBytes } from "node:crypto";
import type { EndpointUpdate, SettingsStore, WebhookSettings } from "./ports.js";

export type { EndpointUpdate, Rotation, SettingsStore, WebhookSettings } from "./ports.js";

/** How long a rotated-out secret keeps signing beside the new one (decisions §8). */
export const PREVIOUS_SECRET_GRACE_MS = 24 * 60 * 60 * 1000;

/** A fresh Standard Webhooks secret: `whsec_` and the base64 of 32 random bytes. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}

/** Settings for a platform notifications has not heard of yet: no endpoint, a fresh secret. */
export function initialSettings(platformId: string, now: Date): WebhookSettings {
  return {
    platformId,
    webhookEndpoint: "",
    secret: newSigningSecret(),
    secretCreatedAt: now,
    previousSecret: null,
    previousSecretExpiresAt: null,
    configVersion: null,
    endpointSetAt: null,
    webhookEventNaming: "CORRIDOR",
    updatedAt: now,
  };
}

/** A config version (ns since the epoch) as a Date, to the millisecond. */
export function versionDate(configVersion: bigint): Date {
  return new Date(Number(configVersion / 1_000_000n));
}

/**
 * The settings, created on first use. A platform may be read before its PlatformCreated event has
 * arrived (or it predates this service); its secret is still needed, and the endpoint copy is
 * filled in when the event comes.
 */
export async function ensureSettings(store: SettingsStore, platformId: string, now: Date): Promise<WebhookSettings> {
  return (await store.find(platformId)) ?? (await store.insertIfAbsent(initialSettings(platformId, now)));
}

/** The previous secret only while it still signs; afterwards the settings show none. */
export function withoutExpiredPrevious(settings: WebhookSettings, now: Date): WebhookSettings {
  if (settings.previousSecretExpiresAt && settings.previousSecretExpiresAt.getTime() > now.getTime()) return settings;
  return { ...settings, previousSecret: null, previousSecretExpiresAt: null };
}

/** Secrets that sign a delivery made at `now`: the current one, then the previous while valid. */
export function signingSecrets(settings: WebhookSettings, now: Date): string[] {
  const live = withoutExpiredPrevious(settings, now);
  return live.previousSecret ? [live.secret, live.previousSecret] : [live.secret];
}

export async function rotateSecret(store: SettingsStore, platformId: string, now: Date): Promise<WebhookSettings> {
  await ensureSettings(store, platformId, now);
  const rotated = await store.rotate(platformId, {
    secret: newSigningSecret(),
    at: now,
    previousSecretExpiresAt: new Date(now.getTime() + PREVIOUS_SECRET_GRACE_MS),
  });
  return withoutExpiredPrevious(rotated, now);
}

/**
 * Applies the platform's configured endpoint as of `configVersion`. Events of one platform are
 * ordered on the bus, but a redelivery or a replay may still bring an older one: only a newer
 * version wins. When the endpoint changes (or is first set), `endpointSetAt` becomes that
 * version's time: the endpoint receives the events that occur from then on (decisions §8).
 */
export async function applyEndpointCopy(store: SettingsStore, update: EndpointUpdate): Promise<boolean> {
  return store.applyEndpoint(update, {
    ...initialSettings(update.platformId, update.at),
    webhookEndpoint: update.webhookEndpoint,
    webhookEventNaming: update.webhookEventNaming ?? "CORRIDOR",
    configVersion: update.configVersion,
    endpointSetAt: update.webhookEndpoint ? versionDate(update.configVersion) : null,
  });
}
