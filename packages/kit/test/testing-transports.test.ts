import { describe, expect, it } from "vitest";
import { createClient } from "@connectrpc/connect";
import { AuthSessionsService } from "@corridor/proto/corridor/auth_sessions/v1/auth_sessions_service_pb.js";
import { errors } from "../src/errors.js";
import { expectRefusal, fakeService, serviceTransport } from "../src/testing/index.js";

describe("kit/testing transports", () => {
  it("a fake service's AppError reaches the caller as its public refusal", async () => {
    const client = createClient(AuthSessionsService, fakeService(AuthSessionsService, { async getPlatform() { throw errors.notFound("Platform", "p"); } }));
    await expectRefusal(client.getPlatform({ platformId: "p" }), "NOT_FOUND", "PLATFORM_NOT_FOUND");
  });

  it("serviceTransport serves a service's routes", async () => {
    const client = createClient(AuthSessionsService, serviceTransport((r) => r.service(AuthSessionsService, { async getPlatform(req) { return { platform: { id: req.platformId } }; } })));
    expect((await client.getPlatform({ platformId: "p" })).platform?.id).toBe("p");
  });
});
