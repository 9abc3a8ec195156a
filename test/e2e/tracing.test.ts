import { randomBytes } from "node:crypto";
import { createClient } from "@connectrpc/connect";
import { SpanKind } from "@opentelemetry/api";
import { createLogger, installTestTracing, type ReadableSpan } from "@corridor/kit";
import { startEmbedded, type EmbeddedSystem } from "@corridor/embedded";
import { PlatformAdminService } from "@corridor/proto/corridor/auth_sessions/v1/platform_admin_service_pb.js";
import { Environment } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFreshDatabase } from "../infra/databases.js";
import { eventually } from "./harness.js";

// Spans are collected in this process, so this suite runs the system in-process — but on the
// real Postgres and the real Kafka broker, so the trace crosses a real database and real Kafka headers.
const reason = !process.env.KAFKA_BROKERS ? "needs KAFKA_BROKERS (a real broker) to prove propagation through Kafka headers" : "";

describe.skipIf(reason)("tracing across gateway, services, Postgres and Kafka", () => {
  const exporter = installTestTracing();
  let system: EmbeddedSystem;
  let fresh: Awaited<ReturnType<typeof createFreshDatabase>> | undefined;
  let auth: string;

  beforeAll(async () => {
    fresh = process.env.DATABASE_URL ? await createFreshDatabase(process.env.DATABASE_URL, "corridor_trace", { migrated: true }) : undefined;
    system = await startEmbedded({
      log: createLogger("trace-test", "warn"),
      databaseUrl: fresh?.url,
      kafkaBrokers: process.env.KAFKA_BROKERS!.split(","),
      kafkaTopicPrefix: `trace-${randomBytes(4).toString("hex")}.`,
      httpHost: "127.0.0.1",
      httpPort: 0,
    });
    const admin = createClient(PlatformAdminService, system.transportFor("auth-sessions"));
    const created = await admin.createPlatform({ name: "traced", environment: Environment.SANDBOX });
    auth = `Basic ${Buffer.from(`${created.token!.clientId}:${created.clientSecret}`).toString("base64")}`;
  });
  afterAll(async () => {
    await system?.stop();
    await fresh?.drop();
  });

  it("puts gateway, auth-sessions, its queries and the notifications consumer in one trace", async () => {
    const traceId = randomBytes(16).toString("hex");
    const res = await fetch(`${system.url}/2025-10-13/config`, {
      method: "PATCH",
      headers: {
        authorization: auth,
        "content-type": "application/json",
        traceparent: `00-${traceId}-${randomBytes(8).toString("hex")}-01`,
      },
      body: JSON.stringify({ webhookEndpoint: "https://hooks.example.test/corridor" }),
    });
    expect(res.status).toBe(200);

    const inTrace = () => exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
    // The consumer runs after the outbox relay published to Kafka: wait for its span.
    const consumer = await eventually(async () =>
      inTrace().find((s) => s.kind === SpanKind.CONSUMER && s.name.startsWith("corridor.platforms.v1") && String(s.attributes["messaging.consumer.group.name"]).startsWith("notifications")),
    );
    const spans = inTrace();
    const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]));
    const parentOf = (s: ReadableSpan) => byId.get(s.parentSpanContext?.spanId ?? "");

    const http = spans.find((s) => s.kind === SpanKind.SERVER && s.name.includes("PATCH"));
    expect(http, "gateway HTTP span").toBeDefined();
    const rpcServer = spans.find((s) => s.kind === SpanKind.SERVER && s.name === "corridor.auth_sessions.v1.AuthSessionsService/UpdatePlatformConfig");
    expect(rpcServer, `auth-sessions server span among: ${spans.map((s) => `${s.kind}:${s.name}`).join(", ")}`).toBeDefined();
    const rpcClient = parentOf(rpcServer!);
    expect(rpcClient?.kind).toBe(SpanKind.CLIENT);
    expect(parentOf(rpcClient!)).toBe(http);

    const queries = spans.filter((s) => s.name === "db.query" && parentOf(s) === rpcServer);
    expect(queries.length, "Postgres queries under the auth-sessions span").toBeGreaterThan(0);
    expect(queries.some((q) => String(q.attributes["db.query.text"] ?? "").includes("platform_configs"))).toBe(true);

    expect(consumer.attributes["messaging.system"]).toBe("kafka");
    expect(consumer.spanContext().traceId).toBe(traceId);
  });
});
