import type { Transport } from "@connectrpc/connect";
import { platformFactsClient, type ConfigBoard } from "@corridor/kit";
import type { CurrentEndpoint } from "../domain/ports.js";

/**
 * The platform's current webhook endpoint from auth-sessions (the kit's platform-facts client),
 * versioned by the config's updated_at in nanoseconds exactly as the platform events are, so both
 * kinds of update order the same way. Undefined when the platform has no config.
 */
export function currentEndpointReader(transport: () => Transport, board?: ConfigBoard): CurrentEndpoint {
  const platforms = platformFactsClient(transport, { board });
  return async (platformId) => {
    const config = await platforms.config(platformId);
    if (config.version === undefined) return undefined;
    return { webhookEndpoint: config.webhookEndpoint, configVersion: config.version };
  };
}
