import { create, toBinary } from "@bufbuild/protobuf";
import { createClient, createRouterTransport } from "@connectrpc/connect";
import { PlatformEventSchema } from "@corridor/proto/corridor/auth_sessions/v1/events_pb.js";
import { Health, HealthCheckResponse_ServingStatus as Status } from "@corridor/proto/grpc/health/v1/health_pb.js";
import { metrics } from "@opentelemetry/api";
import Fastify from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Bus, SubscribeOptions } from "../src/bus/types.js";
import { migrateSchema, sql, type DatabaseHandle } from "../src/db/index.js";
import { createLogger } from "../src/log.js";
import { subscribeConsumer } from "../src/outbox/index.js";
import type { ConsumerDefinition } from "../src/service.js";
import {
  metricsExportRequested,
  observeDatabasePool,
  observeOutbox,
  registerFastifyMetrics,
  startMetrics,
  tracingClientInterceptor,
  tracingServerInterceptor,
  type Metrics,
} from "../src/telemetry/index.js";
import { openTestDatabase } from "./db-fixture.js";

/** The value of one sample of the scrape whose name and labels match (labels as a substring set). */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) return Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return undefined;
}

describe("metrics off by default", () => {
  it("starts nothing without a port or an OTLP endpoint: no provider registered, nothing loaded", async () => {
    const m = await startMetrics({ serviceName: "t", env: {} });
    expect(m.enabled).toBe(false);
    expect(metrics.getMeterProvider().constructor.name).toBe("NoopMeterProvider");
  });

  it("exports by OTLP only when an endpoint is named and OTEL_METRICS_EXPORTER is not none", () => {
    expect(metricsExportRequested({})).toBe(false);
    expect(metricsExportRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" })).toBe(true);
    expect(metricsExportRequested({ OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: "http://collector:4318/v1/metrics" })).toBe(true);
    expect(metricsExportRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318", OTEL_METRICS_EXPORTER: "none" })).toBe(false);
  });
});

describe("the Prometheus scrape endpoint", () => {
  let m: Metrics;
  let handle: DatabaseHandle;
  let dispose: () => Promise<void>;
  const scrape = async () => (await fetch(`http://127.0.0.1:${m.port}/metrics`)).text();

  beforeAll(async () => {
    m = await startMetrics({ serviceName: "metrics-test", port: 0, host: "127.0.0.1", env: {} });
    ({ handle, dispose } = await openTestDatabase(process.env.DATABASE_URL ? "postgres" : "pglite"));
  });
  afterAll(async () => {
    await m?.shutdown();
    await dispose?.();
  });

  it("serves http.server.request.duration per route template, method and status class, never the raw path", async () => {
    const app = Fastify();
    registerFastifyMetrics(app);
    app.get("/v1/customers/:id", async (req, reply) => reply.code((req.params as { id: string }).id === "missing" ? 404 : 200).send({}));
    await app.inject({ method: "GET", url: "/v1/customers/Customer:123" });
    await app.inject({ method: "GET", url: "/v1/customers/Customer:456" });
    await app.inject({ method: "GET", url: "/v1/customers/missing" });
    await app.inject({ method: "GET", url: "/nowhere/at/all" });
    await app.close();
    const text = await scrape();
    const route = { http_route: "/v1/customers/:id", http_request_method: "GET" };
    expect(sample(text, "http_server_request_duration_count", { ...route, http_response_status_class: "2xx" })).toBe(2);
    expect(sample(text, "http_server_request_duration_count", { ...route, http_response_status_class: "4xx" })).toBe(1);
    expect(sample(text, "http_server_request_duration_count", { http_route: "unmatched", http_response_status_class: "4xx" })).toBe(1);
    expect(text).not.toContain("Customer:123");
    expect(text).not.toContain("/nowhere");
  });

  it("serves rpc.server.duration and rpc.client.duration per method and code from the Connect interceptors", async () => {
    const all = { ignoreServices: [] };
    const transport = createRouterTransport((r) => r.service(Health, { check: () => ({ status: Status.SERVING }) }), {
      transport: { interceptors: [tracingClientInterceptor(all)] },
      router: { interceptors: [tracingServerInterceptor(all)] },
    });
    await createClient(Health, transport).check({});
    await expect(createClient(Health, transport).watch({})[Symbol.asyncIterator]().next()).rejects.toThrow();
    const text = await scrape();
    const check = { rpc_service: "grpc.health.v1.Health", rpc_method: "Check", rpc_grpc_status_code: "0" };
    expect(sample(text, "rpc_server_duration_count", check)).toBe(1);
    expect(sample(text, "rpc_client_duration_count", check)).toBe(1);
    // Watch is not implemented by this router: code 12 (UNIMPLEMENTED).
    expect(sample(text, "rpc_client_duration_count", { rpc_method: "Watch", rpc_grpc_status_code: "12" })).toBe(1);
  });

  it("serves the outbox backlog and its oldest row's age per schema, read at scrape time", async () => {
    await migrateSchema(handle, "metrics_outbox", "/nonexistent/kit-test-migrations");
    const db = handle.forSchema<any>("metrics_outbox");
    observeOutbox(db, "metrics_outbox");
    expect(sample(await scrape(), "corridor_outbox_backlog", { db_namespace: "metrics_outbox" })).toBe(0);
    await db
      .insertInto("outbox")
      .values([1, 2, 3].map((n) => ({ event_id: `e${n}`, topic: "t", key: `k${n}`, payload: Buffer.from([n]) })))
      .execute();
    await db.updateTable("outbox").set({ created_at: new Date(Date.now() - 120_000) }).where("event_id", "=", "e1").execute();
    let text = await scrape();
    expect(sample(text, "corridor_outbox_backlog", { db_namespace: "metrics_outbox" })).toBe(3);
    expect(sample(text, "corridor_outbox_oldest_age", { db_namespace: "metrics_outbox" })).toBeGreaterThanOrEqual(119);
    await db.updateTable("outbox").set({ published_at: new Date() }).execute();
    text = await scrape();
    expect(sample(text, "corridor_outbox_backlog", { db_namespace: "metrics_outbox" })).toBe(0);
    expect(sample(text, "corridor_outbox_oldest_age", { db_namespace: "metrics_outbox" })).toBe(0);
  });

  it("serves every database transaction's duration by outcome, timed at the driver however it was opened", async () => {
    const db = handle.root;
    const before = await scrape();
    const commits = sample(before, "corridor_db_transaction_duration_count", { corridor_db_transaction_outcome: "commit" }) ?? 0;
    const commitSeconds = sample(before, "corridor_db_transaction_duration_sum", { corridor_db_transaction_outcome: "commit" }) ?? 0;
    const rollbacks = sample(before, "corridor_db_transaction_duration_count", { corridor_db_transaction_outcome: "rollback" }) ?? 0;
    await db.transaction().execute(async (trx) => {
      await sql`select pg_sleep(0.05)`.execute(trx);
    });
    // A controlled transaction counts too; its savepoint is part of it, not a transaction of its own.
    const controlled = await db.startTransaction().execute();
    const inner = await controlled.savepoint("inner").execute();
    await inner.releaseSavepoint("inner").execute();
    await controlled.commit().execute();
    await expect(
      db.transaction().execute(async (trx) => {
        await sql`select 1`.execute(trx);
        throw new Error("refused");
      }),
    ).rejects.toThrow("refused");
    // Queries outside a transaction are not transactions.
    await sql`select 1`.execute(db);
    const text = await scrape();
    expect(sample(text, "corridor_db_transaction_duration_count", { corridor_db_transaction_outcome: "commit" })).toBe(commits + 2);
    expect(sample(text, "corridor_db_transaction_duration_count", { corridor_db_transaction_outcome: "rollback" })).toBe(rollbacks + 1);
    const took = sample(text, "corridor_db_transaction_duration_sum", { corridor_db_transaction_outcome: "commit" })! - commitSeconds;
    expect(took).toBeGreaterThanOrEqual(0.05);
    expect(took).toBeLessThan(5);
  });

  it("serves the database pool's connections used, idle and waiting", async () => {
    observeDatabasePool("pool-test", () => ({ total: 5, idle: 2, waiting: 4, max: 10 }));
    const text = await scrape();
    expect(sample(text, "db_client_connection_count", { db_client_connection_pool_name: "pool-test", db_client_connection_state: "used" })).toBe(3);
    expect(sample(text, "db_client_connection_count", { db_client_connection_pool_name: "pool-test", db_client_connection_state: "idle" })).toBe(2);
    expect(sample(text, "db_client_connection_pending_requests", { db_client_connection_pool_name: "pool-test" })).toBe(4);
  });

  it("serves the Node runtime: event-loop delay, heap, GC", async () => {
    const text = await scrape();
    expect(sample(text, "v8js_memory_heap_used")).toBeGreaterThan(0);
    expect(sample(text, "process_memory_usage")).toBeGreaterThan(0);
    expect(text).toContain("nodejs_eventloop_utilization");
  });

  it("serves the inbox's handling duration per consumer group, and its failures by error type", async () => {
    await migrateSchema(handle, "metrics_inbox", "/nonexistent/kit-test-migrations");
    let deliver: SubscribeOptions["handle"] | undefined;
    const bus: Bus = {
      kind: "in-process",
      publish: async () => {},
      subscribe: async (o) => {
        deliver = o.handle;
        return { close: async () => {} };
      },
      close: async () => {},
    };
    let fail = true;
    await subscribeConsumer({
      db: handle.forSchema("metrics_inbox"),
      bus,
      service: "svc",
      log: createLogger("metrics-test", "silent"),
      def: {
        name: "applier",
        topic: "corridor.test.v1",
        schema: PlatformEventSchema,
        eventId: (e) => e.eventId,
        handle: async () => {
          if (fail) throw new RangeError("handler failed");
        },
      } satisfies ConsumerDefinition<typeof PlatformEventSchema>,
    });
    const message = (n: number) => ({ topic: "corridor.test.v1", key: "k", value: toBinary(PlatformEventSchema, create(PlatformEventSchema, { eventId: `Event:${n}`, platformId: "Platform:1" })), headers: {} });
    await expect(deliver!(message(1))).rejects.toThrow("handler failed");
    fail = false;
    await deliver!(message(1));
    await deliver!(message(2));
    const text = await scrape();
    const group = { messaging_consumer_group_name: "svc.applier", messaging_destination_name: "corridor.test.v1" };
    expect(sample(text, "corridor_inbox_failures_total", { ...group, error_type: "RangeError" })).toBe(1);
    expect(sample(text, "messaging_process_duration_count", { ...group, error_type: "RangeError" })).toBe(1);
    // Handled: the count of series without error_type (the sample helper matches by substring, so filter them).
    const ok = text.split("\n").filter((l) => l.startsWith("messaging_process_duration_count{") && l.includes('messaging_consumer_group_name="svc.applier"') && !l.includes("error_type"));
    expect(ok.map((l) => Number(l.slice(l.lastIndexOf(" ") + 1)))).toEqual([2]);
  });
});

