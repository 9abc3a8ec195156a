import type { Clock } from "@corridor/kit";
import type { PlatformTime } from "./ports.js";

/**
 * The time a platform lives on (windows, device-code and quote expiry): sandbox platforms their
 * sandbox clock (real time + what POST /sandbox/clock/advance added), production platforms the
 * service clock. An environment never changes, so it is asked once per platform per process.
 */
export function platformTime(deps: {
  clock: Clock;
  environment: (platformId: string) => Promise<"SANDBOX" | "PRODUCTION">;
  sandboxNow: (platformId: string) => Promise<Date>;
}): PlatformTime {
  const environments = new Map<string, "SANDBOX" | "PRODUCTION">();
  return {
    async now(platformId) {
      let env = environments.get(platformId);
      if (!env) environments.set(platformId, (env = await deps.environment(platformId)));
      return env === "SANDBOX" ? deps.sandboxNow(platformId) : deps.clock.now();
    },
  };
}
