import { trace } from "@opentelemetry/api";
import { pino, type Logger } from "pino";

export type { Logger };

/**
 * JSON logs on stdout, one line per record, carrying the active trace and span ids so a log
 * line can be found from a trace and back.
 */
export function createLogger(service: string, level = process.env.LOG_LEVEL ?? "info"): Logger {
  return pino({
    level,
    base: { service },
    timestamp: pino.stdTimeFunctions.isoTime,
    mixin() {
      const span = trace.getActiveSpan();
      if (!span) return {};
      const ctx = span.spanContext();
      return { trace_id: ctx.traceId, span_id: ctx.spanId };
    },
  });
}
