import { createClient, type Client, type Transport } from "@connectrpc/connect";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { SandboxService } from "@corridor/proto/corridor/sandbox/v1/sandbox_service_pb.js";

/** SandboxService.GetClock: a platform's sandbox time (real time + its offset). */
export function sandboxClock(transport: () => Transport): (platformId: string) => Promise<Date> {
  // Resolved on first use: a service may call another only at request time, never while starting.
  let client: Client<typeof SandboxService> | undefined;
  return async (platformId) => {
    client ??= createClient(SandboxService, transport());
    const res = await client.getClock({ platformId });
    if (!res.now) throw new Error("the sandbox answered without a clock");
    return timestampDate(res.now);
  };
}
