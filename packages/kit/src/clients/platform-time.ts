import { timestampDate } from "@bufbuild/protobuf/wkt";
import { createClient, type Client, type Transport } from "@connectrpc/connect";
import { SandboxService } from "@corridor/proto/corridor/sandbox/v1/sandbox_service_pb.js";
import type { Clock } from "../clock.js";
import type { PlatformEnvironment } from "./platform-facts.js";

/** The time a platform lives on: what its expiries are set and checked by. */
export interface PlatformTime {
  /** Never call it inside a database transaction: for a sandbox platform it asks the sandbox service. */
  now(platformId: string): Promise<Date>;
}

/**
 * A platform's time: sandbox platforms live on their sandbox clock (real time + the offset POST
 * /sandbox/clock/advance added, SandboxService.GetClock), production platforms on the service
 * clock. An environment never changes, so it is remembered after the first lookup. A platform
 * whose environment is unknown (`undefined`: no such platform) is on the service clock; the
 * caller's own lookup answers its 404.
 */
export function platformTime(deps: {
  clock: Clock;
  environment: (platformId: string) => Promise<PlatformEnvironment | undefined>;
  sandboxNow: (platformId: string) => Promise<Date>;
}): PlatformTime {
  const environments = new Map<string, PlatformEnvironment>();
  return {
    async now(platformId) {
      let env = environments.get(platformId);
      if (!env) {
        env = await deps.environment(platformId);
        if (!env) return deps.clock.now();
        environments.set(platformId, env);
      }
      return env === "SANDBOX" ? deps.sandboxNow(platformId) : deps.clock.now();
    },
  };
}

/** SandboxService.GetClock over `transport` (resolved on first use: services call each other only at request time). */
export function sandboxClockClient(transport: () => Transport): (platformId: string) => Promise<Date> {
  let client: Client<typeof SandboxService> | undefined;
  return async (platformId) => {
    client ??= createClient(SandboxService, transport());
    const res = await client.getClock({ platformId });
    if (!res.now) throw new Error("the sandbox answered without a clock");
    return timestampDate(res.now);
  };
}
