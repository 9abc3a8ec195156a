import { timestampDate } from "@bufbuild/protobuf/wkt";
import { createClient, type Client, type Transport } from "@connectrpc/connect";
import { AuthSessionsService } from "@corridor/proto/corridor/auth_sessions/v1/auth_sessions_service_pb.js";
import { Environment } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import { SandboxService } from "@corridor/proto/corridor/sandbox/v1/sandbox_service_pb.js";
import { call } from "./errors.js";

/** auth-sessions GetPlatform: the environment a platform runs in. */
export function platformEnvironment(transport: () => Transport): (platformId: string) => Promise<"SANDBOX" | "PRODUCTION"> {
  let client: Client<typeof AuthSessionsService> | undefined;
  return async (platformId) => {
    client ??= createClient(AuthSessionsService, transport());
    const res = await call(client.getPlatform({ platformId }));
    return res.platform?.environment === Environment.PRODUCTION ? "PRODUCTION" : "SANDBOX";
  };
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
