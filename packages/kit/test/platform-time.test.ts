import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { createRouterTransport } from "@connectrpc/connect";
import { SandboxService, GetClockResponseSchema } from "@corridor/proto/corridor/sandbox/v1/sandbox_service_pb.js";
import { describe, expect, it } from "vitest";
import { ManualClock } from "../src/clock.js";
import { platformTime, sandboxClockClient } from "../src/clients/platform-time.js";

describe("platformTime", () => {
  const clock = new ManualClock("2026-01-01T00:00:00.000Z");
  const offsets: Record<string, number> = { "Platform:s": 3_600_000, "Platform:p": 3_600_000 };
  const environments: Record<string, "SANDBOX" | "PRODUCTION"> = { "Platform:s": "SANDBOX", "Platform:p": "PRODUCTION" };

  it("answers a sandbox platform's sandbox clock and a production platform's service clock, asking each environment once", async () => {
    const asked: string[] = [];
    const time = platformTime({
      clock,
      environment: async (id) => (asked.push(id), environments[id]),
      sandboxNow: async (id) => new Date(clock.now().getTime() + offsets[id]!),
    });
    expect((await time.now("Platform:s")).toISOString()).toBe("2026-01-01T01:00:00.000Z");
    expect((await time.now("Platform:p")).toISOString()).toBe("2026-01-01T00:00:00.000Z");
    await time.now("Platform:s");
    await time.now("Platform:p");
    expect(asked).toEqual(["Platform:s", "Platform:p"]);
  });

  it("puts an unknown platform on the service clock and asks again next time (it may exist later)", async () => {
    const asked: string[] = [];
    const time = platformTime({ clock, environment: async (id) => (asked.push(id), undefined), sandboxNow: async () => new Date(0) });
    expect(await time.now("Platform:nope")).toEqual(clock.now());
    await time.now("Platform:nope");
    expect(asked).toEqual(["Platform:nope", "Platform:nope"]);
  });

  it("sandboxClockClient reads SandboxService.GetClock", async () => {
    const transport = createRouterTransport((router) =>
      router.service(SandboxService, {
        getClock: async (req: { platformId: string }) =>
          create(GetClockResponseSchema, { now: timestampFromDate(new Date(Date.UTC(2030, 0, 1) + (req.platformId === "Platform:s" ? 1000 : 0))), offsetSeconds: 1n }),
      } as never),
    );
    const now = sandboxClockClient(() => transport);
    expect((await now("Platform:s")).toISOString()).toBe("2030-01-01T00:00:01.000Z");
  });
});
