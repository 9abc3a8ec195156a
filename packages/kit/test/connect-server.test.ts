import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { Health, HealthCheckResponse_ServingStatus as Status } from "@corridor/proto/grpc/health/v1/health_pb.js";
import { afterEach, describe, expect, it } from "vitest";
import { HealthState, serveConnect, type ConnectServer } from "../src/host/index.js";

// serveConnect's connection recycling (gRPC's MAX_CONNECTION_AGE): a client's connection is closed
// gracefully once old enough, and the client's next call opens a new one — the moment a Kubernetes
// Service can route it to another replica.
describe("serveConnect", () => {
  let server: ConnectServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  const start = async (maxConnectionAgeMs: number) => {
    const health = new HealthState();
    server = await serveConnect({ routes: (r) => health.routes(r), interceptors: [], port: 0, host: "127.0.0.1", maxConnectionAgeMs });
    return createClient(Health, createGrpcTransport({ baseUrl: `http://127.0.0.1:${server.port}` }));
  };

  it("recycles a connection older than maxConnectionAgeMs; calls keep succeeding on a new one", async () => {
    const client = await start(150);
    expect((await client.check({})).status).toBe(Status.SERVING);
    expect(server!.connections().accepted).toBe(1);
    await expect.poll(() => server!.connections().open, { timeout: 2_000, interval: 20 }).toBe(0);
    expect((await client.check({})).status).toBe(Status.SERVING);
    expect(server!.connections().accepted).toBe(2);
  });

  it("keeps one connection for good without a maximum age", async () => {
    const client = await start(0);
    await client.check({});
    await new Promise((r) => setTimeout(r, 300));
    await client.check({});
    expect(server!.connections()).toEqual({ accepted: 1, open: 1 });
  });
});
