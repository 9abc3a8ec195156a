import type { Transport } from "@connectrpc/connect";
import { platformFactsClient } from "@corridor/kit";
import type { PlatformDirectory } from "../domain/ports.js";

/**
 * Platform facts from auth-sessions through the kit's platform-facts client: the config read fresh
 * per request (config changes apply at once), the environment remembered (it never changes).
 */
export function platformDirectory(transport: () => Transport): PlatformDirectory {
  const platforms = platformFactsClient(transport);
  return {
    async facts(platformId) {
      const f = await platforms.facts(platformId);
      return { environment: f.environment, umaDomain: f.umaDomain, supportedCurrencies: f.supportedCurrencies };
    },
  };
}
