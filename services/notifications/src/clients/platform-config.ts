import { createClient, type Client, type Transport } from "@connectrpc/connect";
import { AuthSessionsService } from "@corridor/proto/corridor/auth_sessions/v1/auth_sessions_service_pb.js";
import type { CurrentEndpoint } from "../domain/ports.js";
import { timestampNanos } from "../events/platform-events.js";

/**
 * The platform's current webhook endpoint from auth-sessions, versioned by the config's
 * updated_at exactly as the platform events are, so both kinds of update order the same way.
 */
export function currentEndpointReader(transport: () => Transport): CurrentEndpoint {
  // Resolved on first use: a service may call another only at request time, never while starting.
  let client: Client<typeof AuthSessionsService> | undefined;
  return async (platformId) => {
    client ??= createClient(AuthSessionsService, transport());
    const { config } = await client.getPlatformConfig({ platformId });
    if (!config?.updatedAt) return undefined;
    return { webhookEndpoint: config.webhookEndpoint, configVersion: timestampNanos(config.updatedAt) };
  };
}
