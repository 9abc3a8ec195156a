import { createRequire } from "node:module";
import { context, diag, propagation, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from "@opentelemetry/core";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { InMemorySpanExporter, NoopSpanProcessor, SimpleSpanProcessor, TracerProvider, type SpanProcessor } from "@opentelemetry/sdk-trace";

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
  sdk: { shutdown(): Promise<void> };
  testExporter?: InMemorySpanExporter;
  /** Some span processor may see the spans (an exporter, or a test's own processors). */
  spansLeave: boolean;
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
  const serviceName = env.OTEL_SERVICE_NAME || opts.serviceName;
  // Spans leave the process, or the environment configures the SDK: the full NodeSDK. Otherwise
  // (the default, and tests with their own span processors) the tracer alone, as the SDK would
  // set it up.
  const full = sdkConfiguredByEnv(env) || (opts.spanProcessors === undefined && tracesExportRequested(env));
  const sdk = full ? startNodeSdk(opts, serviceName) : startTracerOnly(opts, serviceName);
  const state: TelemetryState = { sdk, spansLeave: opts.spanProcessors !== undefined || tracesExportRequested(env) };
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
 * Whether any span of this process can be seen outside the span objects themselves: true when
 * spans are exported or a test gave its own span processors; false when telemetry was not started
 * or spans only carry trace ids for logs and propagation (the default). Instrumentation that
 * exists only to be looked at, such as one span per SQL query (telemetry/kysely.ts), is skipped
 * when this is false: nothing could read it, and it cost every query a second compilation.
 */
export function spansLeaveProcess(): boolean {
  return g[STATE]?.spansLeave ?? false;
}

/** OTEL_* settings only the NodeSDK reads: with any of them set, the full SDK starts. */
const SDK_ONLY_ENV = ["OTEL_SDK_DISABLED", "OTEL_METRICS_EXPORTER", "OTEL_LOGS_EXPORTER", "OTEL_TRACES_SAMPLER", "OTEL_RESOURCE_ATTRIBUTES", "OTEL_NODE_RESOURCE_DETECTORS"];
const SDK_ONLY_ENV_PREFIXES = ["OTEL_SPAN_", "OTEL_ATTRIBUTE_"];

function sdkConfiguredByEnv(env: NodeJS.ProcessEnv): boolean {
  return Object.keys(env).some((k) => !!env[k] && (SDK_ONLY_ENV.includes(k) || SDK_ONLY_ENV_PREFIXES.some((p) => k.startsWith(p))));
}

const W3C_PROPAGATOR = () => new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] });

/**
 * What the NodeSDK would set up when nothing leaves the process (the default): a tracer provider
 * with the given span processors (or none that export), the AsyncLocalStorage context manager and
 * the W3C propagators. The NodeSDK package itself, with every exporter it can build (OTLP over
 * gRPC/HTTP/protobuf, Zipkin, Prometheus) and the metrics and logs SDKs, is about 300 CommonJS
 * modules: loading it only when something is exported saves start-up time and memory in every
 * process.
 */
function startTracerOnly(opts: StartTelemetryOptions, serviceName: string): { shutdown(): Promise<void> } {
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(W3C_PROPAGATOR());
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ "service.name": serviceName }),
    spanProcessors: opts.spanProcessors ?? [new NoopSpanProcessor()],
  });
  trace.setGlobalTracerProvider(provider);
  return { shutdown: () => provider.shutdown() };
}

/** The full OpenTelemetry NodeSDK, configured by the OTEL_* environment; loaded only when asked for. */
function startNodeSdk(opts: StartTelemetryOptions, serviceName: string): { shutdown(): Promise<void> } {
  const env = process.env;
  // Loaded on demand, synchronously (the package is CommonJS), so no span is lost before it
  // registers. scripts/build.mjs copies the package into the build although nothing imports it.
  const { NodeSDK } = createRequire(import.meta.url)("@opentelemetry/sdk-node") as typeof import("@opentelemetry/sdk-node");
  const sdk = new NodeSDK({
    serviceName,
    autoDetectResources: opts.detectResources ?? true,
    // undefined lets the SDK build OTLP/console/zipkin processors from OTEL_TRACES_EXPORTER etc.
    spanProcessors: opts.spanProcessors ?? (tracesExportRequested(env) ? undefined : [new NoopSpanProcessor()]),
    textMapPropagator: W3C_PROPAGATOR(),
    // Metrics have their own provider (telemetry/metrics.ts, METRICS_PORT and the OTLP endpoint);
    // our logs go to stdout through pino: set logs up only when asked.
    metricReaders: [],
    ...(env.OTEL_LOGS_EXPORTER ? {} : { logRecordProcessors: [] }),
    instrumentations: [],
  });
  sdk.start();
  return sdk;
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
