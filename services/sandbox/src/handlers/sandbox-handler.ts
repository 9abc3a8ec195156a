import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { SandboxService } from "@corridor/proto/corridor/sandbox/v1/sandbox_service_pb.js";
import type { Simulator } from "../domain/simulator.js";

/** SandboxService: maps the clock RPCs onto the simulator. */
export function createSandboxHandler({ simulator }: { simulator: Simulator }): ServiceImpl<typeof SandboxService> {
  return {
    async advanceClock(req) {
      const r = await simulator.advance(req.platformId, req.seconds);
      return { now: timestampFromDate(r.now), offsetSeconds: r.offsetSeconds, fired: r.fired };
    },
    async getClock(req) {
      const c = await simulator.clockOf(req.platformId);
      return { now: timestampFromDate(c.now), offsetSeconds: c.offsetSeconds };
    },
  };
}
