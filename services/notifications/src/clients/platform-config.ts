import type { Transport } from "@connectrpc/connect";
import { platformFactsClient, type ConfigBoard, type PlatformFactsClient } from "@corridor/kit";
import type { CurrentEndpoint } from "../domain/ports.js";

/** The kit's platform-facts client over auth-sessions (one per process: it remembers environments). */
export function platformFacts(transport: () => Transport, board?: ConfigBoard): PlatformFactsClient {
  return platformFactsClient(transport, { board });
}

/**
 * The platform's current webhook endpoint from auth-sessions (the kit's platform-facts client),
 * versioned by the config's updated_at in nanoseconds exactly as the platform events are, so both
 * kinds of update order the same way. Undefined when the platform has no config.
 */
export function currentEndpointReader(platforms: PlatformFactsClient): CurrentEndpoint {
  return async (platformId) => {
    const config = await platforms.config(platformId);
    if (config.version === undefined) return undefined;
    return { webhookEndpoint: config.webhookEndpoint, webhookEventNaming: config.webhookEventNaming, configVersion: config.version };
  };
}

/**
 * Whether the platform has a webhook endpoint now, read through `current` (so with the config
 * board one board read while the copy is current, an RPC otherwise; a change is seen as soon as
 * the PATCH that made it has answered). Undefined when the platform has no config.
 */
export function endpointPresence(current: CurrentEndpoint): (platformId: string) => Promise<boolean | undefined> {
  return async (platformId) => {
    const endpoint = await current(platformId);
    return endpoint === undefined ? undefined : endpoint.webhookEndpoint !== "";
  };
}
