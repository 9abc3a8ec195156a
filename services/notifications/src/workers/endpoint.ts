import type { Clock, Logger } from "@corridor/kit";
import type { Kysely } from "kysely";
import type { QueuedWebhook } from "../data/queue-repo.js";
import { findSettings, settingsStore } from "../data/settings-repo.js";
import type { NotificationsDatabase } from "../data/tables.js";
import { endpointVerdict, type EndpointVerdict } from "../domain/delivery.js";
import type { CurrentEndpoint, WebhookSettings } from "../domain/ports.js";
import { applyEndpointCopy } from "../domain/settings.js";

export type { CurrentEndpoint } from "../domain/ports.js";

const SKIP_NO_ENDPOINT: EndpointVerdict = { kind: "skip", reason: "no webhookEndpoint was set when it occurred" };

/**
 * Where an event webhook goes (decisions §8: an endpoint receives the events that occur after it
 * is set), from the endpoint copy. When the copy has no endpoint but may be behind the event (a
 * config change made just before it, whose event has not arrived), auth-sessions is asked, as TEST
 * does, and its answer folded into the copy; a platform it says has no endpoint is remembered with
 * the time of the answer, so the rest of a burst is skipped without asking again. Without an
 * answer the verdict stays `unknown` (the caller waits a little).
 */
export function createEndpointResolver(deps: { db: Kysely<NotificationsDatabase>; clock: Clock; log: Logger; currentEndpoint?: CurrentEndpoint }) {
  /** Platform → time (ms) as of which auth-sessions said it had no endpoint. */
  const noEndpointAsOf = new Map<string, number>();
  const lookups = new Map<string, Promise<WebhookSettings | undefined>>();

  function remember(platformId: string, asOf: number) {
    if (noEndpointAsOf.size >= 10_000) noEndpointAsOf.delete(noEndpointAsOf.keys().next().value!);
    noEndpointAsOf.set(platformId, asOf);
  }

  /** Folds auth-sessions' current endpoint into the copy; undefined when it cannot answer. One call per platform at a time. */
  function lookUp(ask: CurrentEndpoint, platformId: string): Promise<WebhookSettings | undefined> {
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
      await applyEndpointCopy(settingsStore(deps.db), { platformId, webhookEndpoint: current.webhookEndpoint, configVersion: current.configVersion, at: asOf });
      const settings = await findSettings(deps.db, platformId);
      if (!settings?.webhookEndpoint) remember(platformId, asOf.getTime());
      return settings;
    })().finally(() => lookups.delete(platformId));
    lookups.set(platformId, p);
    return p;
  }

  return async function resolve(row: QueuedWebhook, settings: WebhookSettings | undefined): Promise<{ verdict: EndpointVerdict; settings?: WebhookSettings }> {
    // A redelivery goes to the endpoint current when it was asked for.
    const at = row.redelivered_at ?? row.occurred_at;
    const verdict = endpointVerdict(settings, at);
    if (verdict.kind !== "unknown") return { verdict, settings };
    const asOf = noEndpointAsOf.get(row.platform_id);
    if (asOf !== undefined && at.getTime() <= asOf) return { verdict: SKIP_NO_ENDPOINT };
    if (!deps.currentEndpoint) return { verdict };
    const fresh = await lookUp(deps.currentEndpoint, row.platform_id);
    if (!fresh) return { verdict };
    const after = endpointVerdict(fresh, at);
    // auth-sessions answered with no endpoint: any endpoint set from now on is set after the event.
    if (after.kind === "unknown") return { verdict: SKIP_NO_ENDPOINT };
    return { verdict: after, settings: fresh };
  };
}
