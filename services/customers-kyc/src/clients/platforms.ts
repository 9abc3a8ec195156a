import { createClient, type Client, type Transport } from "@connectrpc/connect";
import { AuthSessionsService } from "@corridor/proto/corridor/auth_sessions/v1/auth_sessions_service_pb.js";
import { Environment } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import type { PlatformDirectory } from "../domain/ports.js";

/**
 * Platform facts from auth-sessions: the config (UMA domain, supported currencies, regulated
 * flag) and the platform (environment). Read fresh on every write: configuration changes apply
 * at once, and the calls are cheap next to the write they guard.
 */
export function platformDirectory(transport: () => Transport): PlatformDirectory {
  // Resolved on first use: a service may call another only at request time, never while starting.
  let client: Client<typeof AuthSessionsService> | undefined;
  return {
    async settings(platformId) {
      client ??= createClient(AuthSessionsService, transport());
      const [config, platform] = await Promise.all([client.getPlatformConfig({ platformId }), client.getPlatform({ platformId })]);
      return {
        umaDomain: config.config?.umaDomain ?? "",
        supportedCurrencies: (config.config?.supportedCurrencies ?? []).map((c) => c.currencyCode),
        isRegulated: config.config?.isRegulatedFinancialInstitution ?? false,
        environment: platform.platform?.environment === Environment.PRODUCTION ? "PRODUCTION" : "SANDBOX",
      };
    },
  };
}
