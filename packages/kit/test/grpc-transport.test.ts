// The service transport against a server that recycles its connections (GOAWAY every 50 ms, as
// CONNECT_MAX_CONNECTION_AGE_MS does every 5 minutes in the chart): calls racing the recycling are
// refused unprocessed by the server (REFUSED_STREAM); the stock transport fails them, the service
// transport sends them again, and nothing raises an uncaught exception.
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { Health } from "@corridor/proto/grpc/health/v1/health_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServiceTransport, HealthState, serveConnect, type ConnectServer } from "../src/index.js";

describe("the service transport", () => {
  let server: ConnectServer;
  let baseUrl = "";
  const uncaught: unknown[] = [];
  const onUncaught = (err: unknown) => uncaught.push(err);

  beforeAll(async () => {
    process.on("uncaughtException", onUncaught);
    const health = new HealthState({ probe: async () => undefined });
    server = await serveConnect({ routes: (r) => health.routes(r), interceptors: [], port: 0, host: "127.0.0.1", maxConnectionAgeMs: 50 });
    baseUrl = `http://127.0.0.1:${server.port}`;
  });
  afterAll(async () => {
    process.off("uncaughtException", onUncaught);
    await server?.close();
  });

  /** Calls one after another with small random gaps for `ms`, counting outcomes. */
  async function hammer(transport: ReturnType<typeof createGrpcTransport>, ms: number) {
    const client = createClient(Health, transport);
    const end = Date.now() + ms;
    let ok = 0;
    const failures: string[] = [];
    while (Date.now() < end) {
      await new Promise((r) => setTimeout(r, Math.random() * 8));
      try {
        await client.check({ service: "" });
        ok++;
      } catch (err) {
        failures.push(String(err));
      }
    }
    return { ok, failures };
  }

  it("the stock transport fails calls the server refused while recycling its connection (the condition is real)", async () => {
    const { ok, failures } = await hammer(createGrpcTransport({ baseUrl }), 3_000);
    expect(ok).toBeGreaterThan(0);
    expect(failures.length).toBeGreaterThan(0);
    expect(failures.every((f) => f.includes("REFUSED_STREAM"))).toBe(true);
  });

  it("sends a refused call again, so every call succeeds through connection recycling, and raises no uncaught exception", async () => {
    const { ok, failures } = await hammer(createServiceTransport({ baseUrl }), 3_000);
    expect(failures).toEqual([]);
    expect(ok).toBeGreaterThan(50);
    expect(server.connections().accepted).toBeGreaterThan(10);
    expect(uncaught).toEqual([]);
  });
});
