export {
  startTelemetry,
  installTestTracing,
  tracesExportRequested,
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
