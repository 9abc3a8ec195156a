import { context, trace } from "@opentelemetry/api";
import { SimpleSpanProcessor } from "@opentelemetry/sdk-trace";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  contextFromHeaders,
  InMemorySpanExporter,
  installTestTracing,
  spansLeaveProcess,
  startTelemetry,
  traceHeaders,
  tracesExportRequested,
  type Telemetry,
} from "../src/telemetry/index.js";

// Each test starts and shuts down its own SDK: shutdown unregisters it, so the next can start.
let running: Telemetry[] = [];
afterEach(async () => {
  for (const t of running.reverse()) await t.shutdown();
  running = [];
  vi.unstubAllEnvs();
});
const start = (...args: Parameters<typeof startTelemetry>) => {
  const t = startTelemetry(...args);
  running.push(t);
  return t;
};

describe("tracesExportRequested", () => {
  it("exports only when an OTLP endpoint or a trace exporter is named", () => {
    expect(tracesExportRequested({})).toBe(false);
    expect(tracesExportRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" })).toBe(true);
    expect(tracesExportRequested({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://collector:4318/v1/traces" })).toBe(true);
    expect(tracesExportRequested({ OTEL_TRACES_EXPORTER: "console" })).toBe(true);
    expect(tracesExportRequested({ OTEL_TRACES_EXPORTER: "none", OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318" })).toBe(false);
  });
});

describe("startTelemetry", () => {
  it("gives spans real trace ids and propagates them without exporting anything", () => {
    vi.stubEnv("OTEL_TRACES_EXPORTER", "");
    vi.stubEnv("OTEL_EXPORTER_OTLP_ENDPOINT", "");
    expect(spansLeaveProcess()).toBe(false);
    start({ serviceName: "ledger" });
    // Nothing can see a span's contents: per-query spans (telemetry/kysely.ts) are skipped.
    expect(spansLeaveProcess()).toBe(false);
    const span = trace.getTracer("test").startSpan("work");
    const ctx = trace.setSpan(context.active(), span);
    expect(span.spanContext().traceId).not.toMatch(/^0+$/);
    expect(span.isRecording()).toBe(true);

    const headers = traceHeaders(ctx);
    expect(headers.traceparent).toBe(`00-${span.spanContext().traceId}-${span.spanContext().spanId}-01`);
    const continued = trace.getSpanContext(contextFromHeaders(headers));
    expect(continued?.traceId).toBe(span.spanContext().traceId);
    expect(continued?.isRemote).toBe(true);
    span.end();
  });

  it("names the resource after the service unless OTEL_SERVICE_NAME says otherwise", async () => {
    for (const [envName, expected] of [
      ["", "quotes-fx"],
      ["quotes-fx-canary", "quotes-fx-canary"],
    ] as const) {
      vi.stubEnv("OTEL_SERVICE_NAME", envName);
      const exporter = new InMemorySpanExporter();
      const t = startTelemetry({
        serviceName: "quotes-fx",
        spanProcessors: [new SimpleSpanProcessor({ exporter })],
        detectResources: false,
      });
      trace.getTracer("test").startSpan("work").end();
      expect(exporter.getFinishedSpans()[0]?.resource.attributes["service.name"]).toBe(expected);
      await t.shutdown();
    }
  });

  it("starts once per process: a second call is ignored and cannot shut the first down", async () => {
    const exporter = new InMemorySpanExporter();
    start({ serviceName: "corridor", spanProcessors: [new SimpleSpanProcessor({ exporter })], detectResources: false });
    const second = startTelemetry({ serviceName: "other" });
    await second.shutdown();
    trace.getTracer("test").startSpan("still traced").end();
    expect(exporter.getFinishedSpans().map((s) => s.name)).toEqual(["still traced"]);
    expect(() => installTestTracing()).toThrow(/already started/);
  });

  it("hands out one in-memory exporter per process to tests", () => {
    const a = installTestTracing();
    const b = installTestTracing();
    expect(b).toBe(a);
    expect(spansLeaveProcess()).toBe(true);
    trace.getTracer("test").startSpan("seen").end();
    expect(a.getFinishedSpans().map((s) => s.name)).toEqual(["seen"]);
  });
});
