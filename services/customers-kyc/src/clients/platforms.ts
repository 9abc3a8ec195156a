import type { Transport } from "@connectrpc/connect";
import { platformFactsClient } from "@corridor/kit";
import type { PlatformDirectory } from "../domain/ports.js";

/**
 * Platform facts from auth-sessions through the kit's platform-facts client: the config (UMA
 * domain, supported currencies, regulated flag) read fresh on every write, so configuration
 * changes apply at once (the calls are cheap next to the write they guard); the environment is
 * remembered (it never changes).
 */
export function platformDirectory(transport: () => Transport): PlatformDirectory {
  const platforms = platformFactsClient(transport);
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
