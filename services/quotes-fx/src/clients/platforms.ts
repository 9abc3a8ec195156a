import { createClient, type Client, type Transport } from "@connectrpc/connect";
import { AuthSessionsService } from "@corridor/proto/corridor/auth_sessions/v1/auth_sessions_service_pb.js";
import { Environment } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import type { PlatformDirectory } from "../domain/ports.js";

/** Platform facts from auth-sessions, read fresh per request (config changes apply at once). */
export function platformDirectory(transport: () => Transport): PlatformDirectory {
  // Resolved on first use: a service may call another only at request time, never while starting.
  let client: Client<typeof AuthSessionsService> | undefined;
  return {
    async facts(platformId) {
      client ??= createClient(AuthSessionsService, transport());
      const [config, platform] = await Promise.all([client.getPlatformConfig({ platformId }), client.getPlatform({ platformId })]);
      return {
        environment: platform.platform?.environment === Environment.PRODUCTION ? "PRODUCTION" : "SANDBOX",
        umaDomain: config.config?.umaDomain ?? "",
        supportedCurrencies: (config.config?.supportedCurrencies ?? []).map((c) => ({
          currencyCode: c.currencyCode,
          minAmount: c.minAmount,
          maxAmount: c.maxAmount,
          requiredCounterpartyFields: c.requiredCounterpartyFields.map((f) => ({ name: f.name, mandatory: f.mandatory })),
          providerRequiredCustomerFields: [...c.providerRequiredCustomerFields],
          enabledTransactionTypes: [...c.enabledTransactionTypes],
        })),
      };
    },
  };
}
