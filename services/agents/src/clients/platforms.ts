import { timestampDate } from "@bufbuild/protobuf/wkt";
import { createClient, type Client, type Transport } from "@connectrpc/connect";
import { platformFactsClient, type PlatformEnvironment } from "@corridor/kit";
import { SandboxService } from "@corridor/proto/corridor/sandbox/v1/sandbox_service_pb.js";
import { call } from "./errors.js";

/** auth-sessions GetPlatform: the environment a platform runs in (the kit's platform-facts client). */
export function platformEnvironment(transport: () => Transport): (platformId: string) => Promise<PlatformEnvironment> {
  const platforms = platformFactsClient(transport);
  return (platformId) => call(platforms.environment(platformId));
}

/** SandboxService.GetClock: a sandbox platform's time (real time + its offset). */
export function sandboxClock(transport: () => Transport): (platformId: string) => Promise<Date> {
  let client: Client<typeof SandboxService> | undefined;
  return async (platformId) => {
    client ??= createClient(SandboxService, transport());
    const res = await call(client.getClock({ platformId }));
    if (!res.now) throw new Error("the sandbox answered without a clock");
    return timestampDate(res.now);
  };
}
