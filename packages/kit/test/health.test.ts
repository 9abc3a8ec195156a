import { createClient, createRouterTransport } from "@connectrpc/connect";
import { Health, HealthCheckResponse_ServingStatus as Status } from "@corridor/proto/grpc/health/v1/health_pb.js";
import { describe, expect, it } from "vitest";
import { HealthState, LIVENESS_SERVICE } from "../src/host/health.js";

describe("HealthState", () => {
  function serve(health: HealthState) {
    return createClient(Health, createRouterTransport((router) => health.routes(router)));
  }

  it("answers readiness from the dependency probe: NOT_SERVING while the database is unreachable, SERVING again by itself once it answers", async () => {
    let databaseUp = false;
    const health = new HealthState({
      probe: async () => {
        if (!databaseUp) throw Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });
      },
      probeEveryMs: 0,
    });
    const client = serve(health);
    expect((await client.check({ service: "" })).status).toBe(Status.NOT_SERVING);
    // Liveness asks for the process alone: an outage of the database restarts nothing.
    expect((await client.check({ service: LIVENESS_SERVICE })).status).toBe(Status.SERVING);
    databaseUp = true;
    expect((await client.check({ service: "" })).status).toBe(Status.SERVING);
  });

  it("answers NOT_SERVING for a probe that does not answer in time", async () => {
    const health = new HealthState({ probe: () => new Promise(() => {}), probeEveryMs: 0, probeTimeoutMs: 10 });
    expect((await serve(health).check({ service: "" })).status).toBe(Status.NOT_SERVING);
  });

  it("answers NOT_SERVING to both once draining, whatever the probe says", async () => {
    const health = new HealthState({ probe: async () => undefined });
    health.setServing(false);
    const client = serve(health);
    expect((await client.check({ service: "" })).status).toBe(Status.NOT_SERVING);
    expect((await client.check({ service: LIVENESS_SERVICE })).status).toBe(Status.NOT_SERVING);
  });
});
