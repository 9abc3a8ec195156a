import type { Clock, Logger } from "@corridor/kit";
import type { Kysely } from "kysely";
import type { QueuedWebhook } from "../data/queue-repo.js";
import { findSettings, settingsStore } from "../data/settings-repo.js";
import type { NotificationsDatabase } from "../data/tables.js";
import { endpointVerdict, type EndpointVerdict } from "../domain/delivery.js";
import type { CurrentEndpoint, SettingsStore, WebhookSettings } from "../domain/ports.js";
import { applyEndpointCopy } from "../domain/settings.js";

export type { CurrentEndpoint } from "../domain/ports.js";

/** Why a webhook of an event that occurred while its platform had no endpoint is never sent. */
export const NO_ENDPOINT_REASON = "no webhookEndpoint was set when it occurred";
const SKIP_NO_ENDPOINT: EndpointVerdict = { kind: "skip", reason: NO_ENDPOINT_REASON };

/** Platforms remembered at most (the oldest entry goes first). */
const MAX_PLATFORMS = 10_000;

/**
 * What this process knows about each platform's endpoint, in memory, so the per-event path reads
 * no settings:
 * - `presence`: whether the platform had an endpoint when this process last saw its settings (a
 *   claim, a look-up, its own settings writes, the platform events it consumed). Only a hint for
 *   routing: the worker batches the webhooks of a platform it believes has none (see
 *   createDeliveryWorker), and every such batch asks auth-sessions again before it skips anything,
 *   so a stale hint (another replica consumed the config event) delays a webhook by at most one
 *   batch window, never drops one.
 * - `noEndpointAsOf`: the time as of which auth-sessions said the platform had no endpoint (and
 *   the settings, after folding that answer in, held none). A fact, not a hint: an event that
 *   occurred at or before it is skipped whatever the copy says later (any endpoint set afterwards
 *   was set after the event), so it may be applied when the event is enqueued.
 */
export interface EndpointCopy {
  presence(platformId: string): boolean | undefined;
  saw(platformId: string, hasEndpoint: boolean): void;
  noEndpointAsOf(platformId: string): number | undefined;
  rememberNoEndpoint(platformId: string, asOfMs: number): void;
  /** The reason to store a webhook SKIPPED at enqueue, when auth-sessions already said there was no endpoint when it occurred. */
  skipAtEnqueue(platformId: string, occurredAt: Date): string | undefined;
  /** Called when an endpoint is seen on a platform this process believed had none. */
  onEndpointAppeared(listener: (platformId: string) => void): void;
}

export function createEndpointCopy(): EndpointCopy {
  const present = new Map<string, boolean>();
  const noneAsOf = new Map<string, number>();
  const listeners: ((platformId: string) => void)[] = [];
  const put = <V>(m: Map<string, V>, k: string, v: V) => {
    m.delete(k);
    if (m.size >= MAX_PLATFORMS) m.delete(m.keys().next().value!);
    m.set(k, v);
  };
  return {
    presence: (platformId) => present.get(platformId),
    saw(platformId, hasEndpoint) {
      const before = present.get(platformId);
      put(present, platformId, hasEndpoint);
      if (hasEndpoint && before === false) for (const l of listeners) l(platformId);
    },
    noEndpointAsOf: (platformId) => noneAsOf.get(platformId),
    rememberNoEndpoint(platformId, asOfMs) {
      if ((noneAsOf.get(platformId) ?? -Infinity) < asOfMs) put(noneAsOf, platformId, asOfMs);
    },
    skipAtEnqueue(platformId, occurredAt) {
      const asOf = noneAsOf.get(platformId);
      return asOf !== undefined && occurredAt.getTime() <= asOf ? NO_ENDPOINT_REASON : undefined;
    },
    onEndpointAppeared(listener) {
      listeners.push(listener);
    },
  };
}

/** A settings store that tells the copy what this process writes and reads (the handler's fold-ins, lazy creation). */
export function observedSettingsStore(store: SettingsStore, copy: EndpointCopy): SettingsStore {
  const seen = (s: WebhookSettings) => {
    copy.saw(s.platformId, s.webhookEndpoint !== "");
    return s;
  };
  return {
    find: async (platformId) => {
      const s = await store.find(platformId);
      return s && seen(s);
    },
    insertIfAbsent: async (settings) => seen(await store.insertIfAbsent(settings)),
    applyEndpoint: async (update, fresh) => {
      const applied = await store.applyEndpoint(update, fresh);
      if (applied) copy.saw(update.platformId, update.webhookEndpoint !== "");
      return applied;
    },
    rotate: async (platformId, rotation) => seen(await store.rotate(platformId, rotation)),
  };
}

/** A look-up's outcome: the settings after folding auth-sessions' answer in, as of `asOf` (when it was asked). */
export interface LookedUp {
  settings: WebhookSettings | undefined;
  asOf: Date;
}

export interface EndpointResolver {
  /** Where this webhook goes, from its platform's settings (as the claim read them). */
  resolve(row: QueuedWebhook, settings: WebhookSettings | undefined): Promise<{ verdict: EndpointVerdict; settings?: WebhookSettings }>;
  /** Asks auth-sessions for the platform's endpoint and folds it into the copy; undefined when it cannot answer. */
  lookUp(platformId: string): Promise<LookedUp | undefined>;
}

/**
 * Where an event webhook goes (decisions §8: an endpoint receives the events that occur after it
 * is set), from the endpoint copy. When the copy has no endpoint but may be behind the event (a
 * config change made just before it, whose event has not arrived), auth-sessions is asked, as TEST
 * does, and its answer folded into the copy; a platform it says has no endpoint is remembered with
 * the time of the answer (EndpointCopy.noEndpointAsOf), so the rest of a burst is skipped without
 * asking again. Without an answer the verdict stays `unknown` (the caller waits a little).
 */
export function createEndpointResolver(deps: { db: Kysely<NotificationsDatabase>; clock: Clock; log: Logger; currentEndpoint?: CurrentEndpoint; copy?: EndpointCopy }): EndpointResolver {
  const copy = deps.copy ?? createEndpointCopy();
  const lookups = new Map<string, Promise<LookedUp | undefined>>();

  /** Folds auth-sessions' current endpoint into the copy; undefined when it cannot answer. One call per platform at a time. */
  function lookUp(platformId: string): Promise<LookedUp | undefined> {
    const ask = deps.currentEndpoint;
    if (!ask) return Promise.resolve(undefined);
    let p = lookups.get(platformId);
    if (p) return p;
    p = (async () => {
      const asOf = deps.clock.now();
      let current: Awaited<ReturnType<CurrentEndpoint>>;
      try {
        current = await ask(platformId);
      } catch (err) {
        deps.log.debug({ err, platformId }, "could not read the platform's config for an event webhook");
        return undefined;
      }
      if (!current) return undefined;
      await applyEndpointCopy(settingsStore(deps.db), { platformId, webhookEndpoint: current.webhookEndpoint, webhookEventNaming: current.webhookEventNaming, configVersion: current.configVersion, at: asOf });
      const settings = await findSettings(deps.db, platformId);
      copy.saw(platformId, Boolean(settings?.webhookEndpoint));
      if (!settings?.webhookEndpoint) copy.rememberNoEndpoint(platformId, asOf.getTime());
      return { settings, asOf };
    })().finally(() => lookups.delete(platformId));
    lookups.set(platformId, p);
    return p;
  }

  async function resolve(row: QueuedWebhook, settings: WebhookSettings | undefined): Promise<{ verdict: EndpointVerdict; settings?: WebhookSettings }> {
    // A redelivery goes to the endpoint current when it was asked for.
    const at = row.redelivered_at ?? row.occurred_at;
    const verdict = endpointVerdict(settings, at);
    if (verdict.kind !== "unknown") return { verdict, settings };
    const asOf = copy.noEndpointAsOf(row.platform_id);
    if (asOf !== undefined && at.getTime() <= asOf) return { verdict: SKIP_NO_ENDPOINT };
    if (!deps.currentEndpoint) return { verdict };
    const fresh = (await lookUp(row.platform_id))?.settings;
    if (!fresh) return { verdict };
    const after = endpointVerdict(fresh, at);
    // auth-sessions answered with no endpoint: any endpoint set from now on is set after the event.
    if (after.kind === "unknown") return { verdict: SKIP_NO_ENDPOINT };
    return { verdict: after, settings: fresh };
  }

  return { resolve, lookUp };
}
