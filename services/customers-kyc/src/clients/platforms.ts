import type { Transport } from "@connectrpc/connect";
import { platformFactsClient, type ConfigBoard } from "@corridor/kit";
import type { PlatformDirectory } from "../domain/ports.js";

/**
 * Platform facts from auth-sessions through the kit's platform-facts client: the config (UMA
 * domain, supported currencies, regulated flag) as of every write, so configuration changes apply
 * at once (a copy is used while the config board vouches for it); the environment is remembered
 * (it never changes).
 */
export function platformDirectory(transport: () => Transport, board?: ConfigBoard): PlatformDirectory {
  const platforms = platformFactsClient(transport, { board });
  return {
    async settings(platformId) {
      const f = await platforms.facts(platformId);
      return {
        umaDomain: f.umaDomain,
        supportedCurrencies: f.supportedCurrencies.map((c) => c.currencyCode),
        isRegulated: f.isRegulated,
        environment: f.environment,
      };
    },
  };
}
