import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { Code, ConnectError, createClient, createRouterTransport, type ConnectRouter } from "@connectrpc/connect";
import { connectNodeAdapter, createGrpcTransport } from "@connectrpc/connect-node";
import { Health, HealthCheckResponse_ServingStatus as Status } from "@corridor/proto/grpc/health/v1/health_pb.js";
import { SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  installTestTracing,
  tracingClientInterceptor,
  tracingServerInterceptor,
  type ReadableSpan,
} from "../src/telemetry/index.js";

const exporter = installTestTracing();
beforeEach(() => exporter.reset());

// grpc.health.v1 is ignored by default (probe noise); these tests trace it on purpose because it
// is the one service whose shape never changes.
const all = { ignoreServices: [] };

function only(kind: SpanKind, name = "grpc.health.v1.Health/Check"): ReadableSpan {
  const spans = exporter.getFinishedSpans().filter((s) => s.kind === kind && s.name === name);
  expect(spans).toHaveLength(1);
  return spans[0]!;
}

function expectChild(child: ReadableSpan, parent: ReadableSpan): void {
  expect(child.spanContext().traceId).toBe(parent.spanContext().traceId);
  expect(child.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
}

function inMemory(routes: (router: ConnectRouter) => void) {
  return createRouterTransport(routes, {
    transport: { interceptors: [tracingClientInterceptor(all)] },
    router: { interceptors: [tracingServerInterceptor(all)] },
  });
}

describe("Connect tracing over an in-memory transport", () => {
  it("puts the server span under the client span in one trace, under the caller's span", async () => {
    const client = createClient(
      Health,
      inMemory((r) => r.service(Health, { check: () => ({ status: Status.SERVING }) })),
    );
    await trace.getTracer("test").startActiveSpan("caller", async (caller) => {
      await client.check({});
      caller.end();
    });
    const callerSpan = only(SpanKind.INTERNAL, "caller");
    const clientSpan = only(SpanKind.CLIENT);
    const serverSpan = only(SpanKind.SERVER);
    expectChild(clientSpan, callerSpan);
    expectChild(serverSpan, clientSpan);
    expect(clientSpan.attributes).toMatchObject({
      "rpc.system": "connect_rpc",
      "rpc.service": "grpc.health.v1.Health",
      "rpc.method": "Check",
    });
    expect(serverSpan.attributes).toMatchObject({ "rpc.system": "connect_rpc", "rpc.method": "Check" });
    expect(clientSpan.status.code).toBe(SpanStatusCode.UNSET);
  });

  it("makes spans started inside the handler children of the server span", async () => {
    const client = createClient(
      Health,
      inMemory((r) =>
        r.service(Health, {
          check: async () => {
            await Promise.resolve();
            trace.getTracer("test").startSpan("inside handler").end();
            return { status: Status.SERVING };
          },
        }),
      ),
    );
    await client.check({});
    expectChild(only(SpanKind.INTERNAL, "inside handler"), only(SpanKind.SERVER));
  });

  it("records a caller error as an error on the client span only", async () => {
    const client = createClient(
      Health,
      inMemory((r) =>
        r.service(Health, {
          check: () => {
            throw new ConnectError("no such service", Code.NotFound);
          },
        }),
      ),
    );
    await expect(client.check({})).rejects.toThrow(/no such service/);
    const clientSpan = only(SpanKind.CLIENT);
    const serverSpan = only(SpanKind.SERVER);
    expect(clientSpan.attributes["rpc.connect_rpc.error_code"]).toBe("not_found");
    expect(clientSpan.status.code).toBe(SpanStatusCode.ERROR);
    expect(serverSpan.attributes["rpc.connect_rpc.error_code"]).toBe("not_found");
    expect(serverSpan.status.code).toBe(SpanStatusCode.UNSET);
  });

  it("marks the server span as an error when the server fails", async () => {
    const client = createClient(
      Health,
      inMemory((r) =>
        r.service(Health, {
          check: () => {
            throw new Error("boom");
          },
        }),
      ),
    );
    await expect(client.check({})).rejects.toThrow();
    const serverSpan = only(SpanKind.SERVER);
    expect(serverSpan.attributes["rpc.connect_rpc.error_code"]).toBe("unknown");
    expect(serverSpan.status.code).toBe(SpanStatusCode.ERROR);
  });

  it("ends a streaming call's spans when the stream is consumed, with the producer inside the server span", async () => {
    const client = createClient(
      Health,
      inMemory((r) =>
        r.service(Health, {
          check: () => ({ status: Status.SERVING }),
          async *watch() {
            yield { status: Status.SERVING };
            trace.getTracer("test").startSpan("after first message").end();
            yield { status: Status.NOT_SERVING };
          },
        }),
      ),
    );
    const seen: Status[] = [];
    for await (const res of client.watch({})) seen.push(res.status);
    expect(seen).toEqual([Status.SERVING, Status.NOT_SERVING]);
    const clientSpan = only(SpanKind.CLIENT, "grpc.health.v1.Health/Watch");
    const serverSpan = only(SpanKind.SERVER, "grpc.health.v1.Health/Watch");
    expectChild(serverSpan, clientSpan);
    expectChild(only(SpanKind.INTERNAL, "after first message"), serverSpan);
    expect([clientSpan.status.code, serverSpan.status.code]).toEqual([SpanStatusCode.UNSET, SpanStatusCode.UNSET]);
  });

  it("does not trace grpc.health.v1 by default", async () => {
    const client = createClient(
      Health,
      createRouterTransport((r) => r.service(Health, { check: () => ({ status: Status.SERVING }) }), {
        transport: { interceptors: [tracingClientInterceptor()] },
        router: { interceptors: [tracingServerInterceptor()] },
      }),
    );
    await client.check({});
    expect(exporter.getFinishedSpans()).toEqual([]);
  });
});

describe("Connect tracing over h2c with the gRPC protocol", () => {
  let server: http2.Http2Server;
  let baseUrl: string;
  const sessions = new Set<http2.ServerHttp2Session>();

  beforeAll(async () => {
    server = http2.createServer(
      connectNodeAdapter({
        routes: (r) =>
          r.service(Health, {
            check: (req) => {
              if (req.service === "missing") throw new ConnectError("unknown service", Code.NotFound);
              return { status: Status.SERVING };
            },
          }),
        interceptors: [tracingServerInterceptor(all)],
      }),
    );
    server.on("session", (session) => sessions.add(session));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const session of sessions) session.destroy();
    await closed;
  });

  it("continues the trace across the wire and records gRPC status codes", async () => {
    const transport = createGrpcTransport({ baseUrl, interceptors: [tracingClientInterceptor(all)] });
    const client = createClient(Health, transport);
    await client.check({});
    await expect(client.check({ service: "missing" })).rejects.toThrow(/unknown service/);

    const clients = exporter.getFinishedSpans().filter((s) => s.kind === SpanKind.CLIENT);
    const servers = exporter.getFinishedSpans().filter((s) => s.kind === SpanKind.SERVER);
    expect(clients).toHaveLength(2);
    expect(servers).toHaveLength(2);
    for (const c of clients) {
      const s = servers.find((x) => x.parentSpanContext?.spanId === c.spanContext().spanId);
      expect(s).toBeDefined();
      expectChild(s!, c);
      expect(c.attributes["rpc.system"]).toBe("grpc");
      expect(s!.attributes["rpc.system"]).toBe("grpc");
      expect(c.attributes["server.address"]).toBe("127.0.0.1");
    }
    expect(clients.map((c) => c.attributes["rpc.grpc.status_code"]).sort()).toEqual([0, Code.NotFound]);
    // Two separate calls without a common caller are two traces.
    expect(new Set(clients.map((c) => c.spanContext().traceId)).size).toBe(2);
  });
});
