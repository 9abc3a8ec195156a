import { context, diag, propagation, trace } from "@opentelemetry/api";
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from "@opentelemetry/core";
import { NodeSDK } from "@opentelemetry/sdk-node";
import { InMemorySpanExporter, NoopSpanProcessor, SimpleSpanProcessor, type SpanProcessor } from "@opentelemetry/sdk-trace";

export { InMemorySpanExporter, type SpanProcessor };
export type { ReadableSpan } from "@opentelemetry/sdk-trace";

/** Name every Corridor span is created under. */
export const TRACER_NAME = "@corridor/kit";

export interface Telemetry {
  /** Flushes pending spans and unregisters the SDK. Only the first caller's handle does anything. */
  shutdown(): Promise<void>;
}

export interface StartTelemetryOptions {
  /** service.name of the resource; OTEL_SERVICE_NAME overrides it. */
  serviceName: string;
  /** Replace the env-configured span processors (tests use an in-memory exporter). */
  spanProcessors?: SpanProcessor[];
  /**
   * Add host/process/env resource attributes (default true). Detection finishes asynchronously and
   * holds back exports until then, so tests turn it off to see spans as soon as they end.
   */
  detectResources?: boolean;
}

// The OTel API keeps its providers on globalThis, so our "already started" flag lives there too:
// a module loaded twice (vitest re-evaluates modules per file) must still see one SDK per process.
const STATE = Symbol.for("corridor.telemetry");
interface TelemetryState {
  sdk: NodeSDK;
  testExporter?: InMemorySpanExporter;
}
type Global = typeof globalThis & { [STATE]?: TelemetryState };
const g = globalThis as Global;

/**
 * Whether the OTEL_* environment asks for spans to leave the process. The SDK's own default is
 * "otlp to localhost", which would make every laptop run log export errors; we export only when an
 * endpoint or an exporter is named explicitly.
 */
export function tracesExportRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  const exporters = (env.OTEL_TRACES_EXPORTER ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (exporters.length > 0) return !exporters.includes("none");
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

/**
 * Starts the OpenTelemetry SDK once per process (a service in split mode, or the whole embedded
 * system as "corridor"). Spans are always recorded, so trace ids exist for logs and propagate
 * to other services, even when nothing is exported. No auto-instrumentation: Connect, the
 * database and the gateway are traced by the kit's own interceptors, plugin and hooks.
 */
export function startTelemetry(opts: StartTelemetryOptions): Telemetry {
  if (g[STATE]) {
    diag.warn(`telemetry already started in this process; ignoring startTelemetry(${opts.serviceName})`);
    return { shutdown: async () => {} };
  }
  const env = process.env;
  const spanProcessors = opts.spanProcessors ?? (tracesExportRequested(env) ? undefined : [new NoopSpanProcessor()]);
  const sdk = new NodeSDK({
    serviceName: env.OTEL_SERVICE_NAME || opts.serviceName,
    autoDetectResources: opts.detectResources ?? true,
    // undefined lets the SDK build OTLP/console/zipkin processors from OTEL_TRACES_EXPORTER etc.
    spanProcessors,
    textMapPropagator: new CompositePropagator({
      propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()],
    }),
    // We emit no metrics and our logs go to stdout through pino: only set these up when asked.
    ...(env.OTEL_METRICS_EXPORTER ? {} : { metricReaders: [] }),
    ...(env.OTEL_LOGS_EXPORTER ? {} : { logRecordProcessors: [] }),
    instrumentations: [],
  });
  sdk.start();
  const state: TelemetryState = { sdk };
  g[STATE] = state;
  return {
    async shutdown() {
      if (g[STATE] !== state) return;
      delete g[STATE];
      try {
        await sdk.shutdown();
      } catch (err) {
        diag.error("telemetry shutdown failed", err);
      }
      // Unregister so a later startTelemetry in the same process (tests) can register again.
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}

/**
 * Test tracing for vitest workers: starts the SDK with an in-memory exporter the first time and
 * returns the same exporter afterwards. Call `exporter.reset()` between tests.
 */
export function installTestTracing(): InMemorySpanExporter {
  const existing = g[STATE];
  if (existing) {
    if (existing.testExporter) return existing.testExporter;
    throw new Error("installTestTracing: telemetry was already started without a test exporter in this process");
  }
  const exporter = new InMemorySpanExporter();
  startTelemetry({
    serviceName: "test",
    spanProcessors: [new SimpleSpanProcessor({ exporter })],
    detectResources: false,
  });
  g[STATE]!.testExporter = exporter;
  return exporter;
}
