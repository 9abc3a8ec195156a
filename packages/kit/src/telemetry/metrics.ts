import { createRequire } from "node:module";
import { monitorEventLoopDelay, PerformanceObserver, type PerformanceEntry } from "node:perf_hooks";
import { getHeapStatistics } from "node:v8";
import { diag, metrics, type Meter } from "@opentelemetry/api";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { z } from "../config.js";

/**
 * METRICS_PORT of every process: the port of its Prometheus scrape endpoint (`/metrics`, off the
 * public listener). Unset (the default) serves none and loads no metrics SDK, so a laptop run stays
 * lean; the Helm chart sets 9464 (the exporter's registered port) on every pod, and the split
 * runner gives each process its own when CORRIDOR_SPLIT_METRICS_PORT_BASE is set.
 */
export const metricsPortSetting = z.coerce.number().int().min(0).max(65535).optional();

/** Name every Corridor instrument is created under (the `otel_scope_name` label). */
export const METER_NAME = "@corridor/kit";

/**
 * Histogram buckets for durations in seconds: the OpenTelemetry semantic conventions' advice for
 * http.server.request.duration, extended at both ends (a database round trip is well under 5 ms; a
 * webhook delivery or a rail file can take tens of seconds).
 */
export const SECONDS_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 30, 60];

export interface Metrics {
  /** Whether instruments record anything (a Prometheus port or an OTLP endpoint was configured). */
  readonly enabled: boolean;
  /** The port `/metrics` is served on, once listening (undefined when not served). */
  readonly port?: number;
  /** Flushes OTLP exports and closes the scrape endpoint. Only the first caller's handle does anything. */
  shutdown(): Promise<void>;
}

export interface StartMetricsOptions {
  /** service.name of the resource; OTEL_SERVICE_NAME overrides it. */
  serviceName: string;
  /** Serve the Prometheus text format on this port at `/metrics`; undefined = no scrape endpoint. 0 picks a free port. */
  port?: number;
  /** Interface of the scrape endpoint (default all). */
  host?: string;
  /** The process environment (the host's process.env): OTEL_SERVICE_NAME, the OTLP settings. */
  env: NodeJS.ProcessEnv;
  /** Node runtime instruments (event loop, heap, GC); default true. */
  runtime?: boolean;
}

const STATE = Symbol.for("corridor.metrics");
type Global = typeof globalThis & { [STATE]?: { shutdown(): Promise<void> } };
const g = globalThis as Global;

/**
 * Whether the OTEL_* environment asks for metrics to leave the process by OTLP: an endpoint is
 * named (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_METRICS_ENDPOINT) and
 * OTEL_METRICS_EXPORTER does not say `none`.
 */
export function metricsExportRequested(env: NodeJS.ProcessEnv): boolean {
  const exporters = (env.OTEL_METRICS_EXPORTER ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (exporters.includes("none")) return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT);
}

/**
 * Starts the OpenTelemetry metrics SDK once per process, when something reads the metrics: a
 * Prometheus scrape endpoint (`port`, from METRICS_PORT) and/or a periodic OTLP export
 * (OTEL_EXPORTER_OTLP_ENDPOINT; interval OTEL_METRIC_EXPORT_INTERVAL, default 60 s). With neither,
 * nothing is loaded: the SDK packages are required only here, and the kit's instruments stay the
 * API's no-ops (a few hundred bytes), so a laptop run pays nothing.
 *
 * Call it before building anything that records: the OpenTelemetry metrics API has no proxy, so a
 * meter taken before the provider is registered stays a no-op. The kit's instruments take their
 * meter lazily, on first use, for that reason.
 */
export async function startMetrics(opts: StartMetricsOptions): Promise<Metrics> {
  const env = opts.env;
  const otlp = metricsExportRequested(env);
  if (opts.port === undefined && !otlp) return { enabled: false, shutdown: async () => {} };
  if (g[STATE]) {
    diag.warn(`metrics already started in this process; ignoring startMetrics(${opts.serviceName})`);
    return { enabled: true, shutdown: async () => {} };
  }
  const req = createRequire(import.meta.url);
  const { MeterProvider, AggregationType, InstrumentType, PeriodicExportingMetricReader } = req("@opentelemetry/sdk-metrics") as typeof import("@opentelemetry/sdk-metrics");
  const readers: import("@opentelemetry/sdk-metrics").IMetricReader[] = [];
  let prometheus: import("@opentelemetry/exporter-prometheus").PrometheusExporter | undefined;
  if (opts.port !== undefined) {
    const { PrometheusExporter } = req("@opentelemetry/exporter-prometheus") as typeof import("@opentelemetry/exporter-prometheus");
    prometheus = new PrometheusExporter({ port: opts.port, host: opts.host, endpoint: "/metrics", preventServerStart: true });
    await prometheus.startServer();
    readers.push(prometheus);
  }
  if (otlp) {
    // http/protobuf, the OTLP default protocol; the exporter reads the OTEL_EXPORTER_OTLP_* settings itself.
    const { OTLPMetricExporter } = req("@opentelemetry/exporter-metrics-otlp-proto") as typeof import("@opentelemetry/exporter-metrics-otlp-proto");
    const interval = Number(env.OTEL_METRIC_EXPORT_INTERVAL) || 60_000;
    readers.push(new PeriodicExportingMetricReader({ exporter: new OTLPMetricExporter(), exportIntervalMillis: interval }));
  }
  const provider = new MeterProvider({
    resource: resourceFromAttributes({ "service.name": env.OTEL_SERVICE_NAME || opts.serviceName }),
    readers,
    views: [
      {
        // Every histogram of seconds shares the bucket layout (the SDK's default buckets are ms-sized).
        instrumentType: InstrumentType.HISTOGRAM,
        instrumentUnit: "s",
        aggregation: { type: AggregationType.EXPLICIT_BUCKET_HISTOGRAM, options: { boundaries: SECONDS_BUCKETS } },
      },
    ],
  });
  metrics.setGlobalMeterProvider(provider);
  const stopRuntime = opts.runtime === false ? () => {} : observeRuntime(metrics.getMeter(METER_NAME));
  const handle = {
    async shutdown() {
      if (g[STATE] !== handle) return;
      delete g[STATE];
      stopRuntime();
      try {
        await provider.shutdown();
      } catch (err) {
        diag.error("metrics shutdown failed", err);
      }
      metrics.disable();
    },
  };
  g[STATE] = handle;
  const address = (prometheus as unknown as { _server?: import("node:http").Server } | undefined)?._server?.address();
  return { enabled: true, port: address && typeof address === "object" ? address.port : opts.port, shutdown: handle.shutdown };
}

/**
 * Node runtime instruments, named as the OpenTelemetry semantic conventions name them (nodejs.*,
 * v8js.*): event-loop delay percentiles (perf_hooks' histogram, reset at each collection so each
 * scrape sees the interval since the last), heap used and limit, GC pauses by kind.
 */
function observeRuntime(meter: Meter): () => void {
  const loop = monitorEventLoopDelay({ resolution: 20 });
  loop.enable();
  const delay = meter.createObservableGauge("nodejs.eventloop.delay", { unit: "s", description: "Event-loop delay over the last collection interval, by percentile (p50, p90, p99, max)." });
  const utilization = meter.createObservableGauge("nodejs.eventloop.utilization", { unit: "1", description: "Share of time the event loop was busy since the last collection." });
  const heapUsed = meter.createObservableGauge("v8js.memory.heap.used", { unit: "By", description: "V8 heap in use." });
  const heapLimit = meter.createObservableGauge("v8js.memory.heap.limit", { unit: "By", description: "V8 heap size limit." });
  const rss = meter.createObservableGauge("process.memory.usage", { unit: "By", description: "Resident set size of the process." });
  const { performance } = globalThis;
  let lastElu = performance.eventLoopUtilization();
  const batch = meter.addBatchObservableCallback(
    (r) => {
      if (loop.count > 0) {
        for (const [p, v] of [["p50", loop.percentile(50)], ["p90", loop.percentile(90)], ["p99", loop.percentile(99)], ["max", loop.max]] as const) {
          r.observe(delay, v / 1e9, { "nodejs.eventloop.delay.percentile": p });
        }
      }
      loop.reset();
      const elu = performance.eventLoopUtilization(lastElu);
      lastElu = performance.eventLoopUtilization();
      r.observe(utilization, elu.utilization);
      const heap = getHeapStatistics();
      r.observe(heapUsed, heap.used_heap_size);
      r.observe(heapLimit, heap.heap_size_limit);
      r.observe(rss, process.memoryUsage.rss());
    },
    [delay, utilization, heapUsed, heapLimit, rss],
  );
  void batch;
  const gc = meter.createHistogram("v8js.gc.duration", {
    unit: "s",
    description: "Garbage-collection pauses by kind.",
  });
  const GC_KINDS: Record<number, string> = { 1: "minor", 4: "major", 8: "incremental", 16: "weakcb" };
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries() as (PerformanceEntry & { detail?: { kind?: number } })[]) {
      gc.record(entry.duration / 1000, { "v8js.gc.type": GC_KINDS[entry.detail?.kind ?? 0] ?? "other" });
    }
  });
  observer.observe({ entryTypes: ["gc"] });
  return () => {
    observer.disconnect();
    loop.disable();
  };
}

/** The kit's meter: the registered provider's, or the API's no-op before/without startMetrics. */
export function kitMeter(): Meter {
  return metrics.getMeter(METER_NAME);
}

/**
 * Instruments created on first use, after startMetrics registered the provider (a meter taken
 * earlier stays a no-op for good). Each call site keeps one.
 */
export function lazyInstruments<T>(create: (meter: Meter) => T): () => T {
  let made: T | undefined;
  let provider: unknown;
  return () => {
    const current = metrics.getMeterProvider();
    if (made === undefined || provider !== current) {
      made = create(metrics.getMeter(METER_NAME));
      provider = current;
    }
    return made;
  };
}
