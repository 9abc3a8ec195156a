export {
  startTelemetry,
  installTestTracing,
  tracesExportRequested,
  spansLeaveProcess,
  TRACER_NAME,
  InMemorySpanExporter,
  type Telemetry,
  type StartTelemetryOptions,
  type SpanProcessor,
  type ReadableSpan,
} from "./sdk.js";
export { tracingClientInterceptor, tracingServerInterceptor, type TracingInterceptorOptions } from "./connect.js";
export { createTracingPlugin, withTracing, kyselyTracingLog, type TracingPluginOptions } from "./kysely.js";
export { registerFastifyTracing, requestTraceContext } from "./fastify.js";
export { traceHeaders, contextFromHeaders, headersGetter, headersSetter } from "./propagation.js";
export { startMetrics, metricsPortSetting, metricsExportRequested, kitMeter, lazyInstruments, METER_NAME, SECONDS_BUCKETS, type Metrics, type StartMetricsOptions } from "./metrics.js";
export { observeConsumerLag, type ConsumerLag } from "./instruments.js";
export { registerFastifyMetrics, recordRpcDuration, observeDatabasePool, observeOutbox, recordInboxHandling, statusClass, type PoolStats } from "./instruments.js";
export { recordTransactionDuration, observeRailBacklog, recordMoneyMoved, type RailBacklog } from "./instruments.js";
