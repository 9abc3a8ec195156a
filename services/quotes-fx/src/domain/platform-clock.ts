import type { Clock } from "@corridor/kit";
import type { PlatformFacts } from "./ports.js";

/** The time a platform's quotes expire by. Never called inside a database transaction. */
export interface PlatformClock {
  now(platformId: string): Promise<Date>;
}

/**
 * Sandbox platforms live on their sandbox clock (real time + the offset POST /sandbox/clock/advance
 * moved), like every other sandbox delay; production platforms on the service clock. A platform's
 * environment never changes, so it is remembered after the first lookup (one auth-sessions call per
 * platform per process, not per quote read).
 */
export function platformClock(deps: {
  clock: Clock;
  environment: (platformId: string) => Promise<PlatformFacts["environment"]>;
  sandboxNow: (platformId: string) => Promise<Date>;
}): PlatformClock {
  const environments = new Map<string, PlatformFacts["environment"]>();
  return {
    async now(platformId) {
      let env = environments.get(platformId);
      if (!env) environments.set(platformId, (env = await deps.environment(platformId)));
      return env === "SANDBOX" ? deps.sandboxNow(platformId) : deps.clock.now();
    },
  };
}

/** `now(platformId)` of `platformClock`, or the service clock when there is none (no sandbox wired). */
export function platformNowOf(clock: Clock, platformClock?: PlatformClock): (platformId: string) => Promise<Date> {
  return platformClock ? (platformId) => platformClock.now(platformId) : async () => clock.now();
}
