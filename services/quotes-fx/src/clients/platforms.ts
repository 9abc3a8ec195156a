import type { Transport } from "@connectrpc/connect";
import { platformFactsClient, type ConfigBoard } from "@corridor/kit";
import type { PlatformDirectory } from "../domain/ports.js";

/**
 * Platform facts from auth-sessions through the kit's platform-facts client: the config as of the
 * request (a change applies at once; a copy is used while the config board vouches for it), the
 * environment remembered (it never changes).
 */
export function platformDirectory(transport: () => Transport, board?: ConfigBoard): PlatformDirectory {
  const platforms = platformFactsClient(transport, { board });
  return {
    async facts(platformId) {
      const f = await platforms.facts(platformId);
      return { environment: f.environment, umaDomain: f.umaDomain, supportedCurrencies: f.supportedCurrencies };
    },
  };
}
