import type { AddressInfo } from "node:net";
import { createClient, createRouterTransport } from "@connectrpc/connect";
import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import Fastify, { type FastifyInstance } from "fastify";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Health, HealthCheckResponse_ServingStatus as Status } from "@corridor/proto/grpc/health/v1/health_pb.js";
import {
  installTestTracing,
  registerFastifyTracing,
  tracingClientInterceptor,
  tracingServerInterceptor,
  type ReadableSpan,
} from "../src/telemetry/index.js";

const exporter = installTestTracing();

const finished = (kind: SpanKind) => exporter.getFinishedSpans().filter((s) => s.kind === kind);

function expectChild(child: ReadableSpan, parent: ReadableSpan): void {
  expect(child.spanContext().traceId).toBe(parent.spanContext().traceId);
  expect(child.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
}

// A stand-in for a service behind the gateway, reached the way embedded mode reaches services.
const health = createClient(
  Health,
  createRouterTransport((r) => r.service(Health, { check: () => ({ status: Status.SERVING }) }), {
    transport: { interceptors: [tracingClientInterceptor({ ignoreServices: [] })] },
    router: { interceptors: [tracingServerInterceptor({ ignoreServices: [] })] },
  }),
);

let app: FastifyInstance;
beforeEach(() => {
  exporter.reset();
  app = Fastify();
  registerFastifyTracing(app);
});
afterEach(async () => {
  await app.close();
});

/** Asserts HTTP SERVER -> Connect CLIENT -> Connect SERVER, one of each, and returns them. */
function gatewayTrace() {
  const [http] = finished(SpanKind.SERVER).filter((s) => s.name.startsWith("HTTP "));
  const [rpcServer] = finished(SpanKind.SERVER).filter((s) => !s.name.startsWith("HTTP "));
  const [rpcClient] = finished(SpanKind.CLIENT);
  expect(http && rpcClient && rpcServer).toBeTruthy();
  expectChild(rpcClient!, http!);
  expectChild(rpcServer!, rpcClient!);
  return { http: http!, rpcClient: rpcClient!, rpcServer: rpcServer! };
}

describe("registerFastifyTracing", () => {
  it("traces a request as HTTP span -> Connect client span -> Connect server span", async () => {
    app.get("/v1/things/:id", async () => {
      await Promise.resolve();
      return { status: (await health.check({})).status };
    });
    const res = await app.inject({ method: "GET", url: "/v1/things/42?x=1" });
    expect(res.statusCode).toBe(200);

    const { http } = gatewayTrace();
    expect(http.name).toBe("HTTP GET /v1/things/:id");
    expect(http.parentSpanContext).toBeUndefined();
    expect(http.attributes).toMatchObject({
      "http.request.method": "GET",
      "http.route": "/v1/things/:id",
      "url.path": "/v1/things/42",
      "http.response.status_code": 200,
    });
  });

  it("continues an incoming traceparent", async () => {
    app.get("/v1/ping", async () => ({ status: (await health.check({})).status }));
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const parentSpanId = "00f067aa0ba902b7";
    await app.inject({ method: "GET", url: "/v1/ping", headers: { traceparent: `00-${traceId}-${parentSpanId}-01` } });

    const { http, rpcServer } = gatewayTrace();
    expect(http.spanContext().traceId).toBe(traceId);
    expect(http.parentSpanContext?.spanId).toBe(parentSpanId);
    expect(http.parentSpanContext?.isRemote).toBe(true);
    expect(rpcServer.spanContext().traceId).toBe(traceId);
  });

  it("keeps the HTTP span active in hooks and after the body is read from a real socket", async () => {
    // Auth-like hook before the body, and a POST whose body arrives as socket events: the two
    // places where Fastify would otherwise lose the async context.
    app.addHook("onRequest", async () => {
      await health.check({});
    });
    app.post("/v1/things", async (req) => ({ got: req.body, status: (await health.check({})).status }));
    await app.listen({ port: 0, host: "127.0.0.1" });
    const { port } = app.server.address() as AddressInfo;

    const res = await fetch(`http://127.0.0.1:${port}/v1/things`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "x".repeat(100_000) }),
    });
    expect(res.status).toBe(200);

    const [http] = finished(SpanKind.SERVER).filter((s) => s.name === "HTTP POST /v1/things");
    const clients = finished(SpanKind.CLIENT);
    expect(clients).toHaveLength(2);
    for (const c of clients) expectChild(c, http!);
  });

  it("marks a server failure as an error with its status code, and a 404 without a route", async () => {
    app.get("/v1/broken", async () => {
      throw new Error("boom");
    });
    expect((await app.inject({ method: "GET", url: "/v1/broken" })).statusCode).toBe(500);
    expect((await app.inject({ method: "GET", url: "/nowhere" })).statusCode).toBe(404);

    const [broken, missing] = finished(SpanKind.SERVER);
    expect(broken?.name).toBe("HTTP GET /v1/broken");
    expect(broken?.attributes["http.response.status_code"]).toBe(500);
    expect(broken?.status.code).toBe(SpanStatusCode.ERROR);
    expect(missing?.name).toBe("HTTP GET");
    expect(missing?.attributes["http.response.status_code"]).toBe(404);
    expect(missing?.status.code).toBe(SpanStatusCode.UNSET);
  });
});
