import { trace } from "@opentelemetry/api";
import { pino, type Logger } from "pino";

export type { Logger };

/**
 * JSON logs on stdout, one line per record, carrying the active trace and span ids so a log
 * line can be found from a trace and back.
 */
export function createLogger(service: string, level = process.env.LOG_LEVEL ?? "info"): Logger {
  return createBaseLogger({ service }, level);
}

/**
 * The logger of a process that hosts several services (embedded mode): records carry
 * `process`, and each hosted service's child adds its own `service` (pino does not replace a
 * binding a child repeats, it writes the key twice).
 */
export function createProcessLogger(processName: string, level = process.env.LOG_LEVEL ?? "info"): Logger {
  return createBaseLogger({ process: processName }, level);
}

/** Binds `service` to a logger unless it already names that service. */
export function serviceLogger(log: Logger, service: string): Logger {
  return log.bindings().service === service ? log : log.child({ service });
}

function createBaseLogger(base: Record<string, string>, level: string): Logger {
  return pino({
    level,
    base,
    timestamp: pino.stdTimeFunctions.isoTime,
    mixin() {
      const span = trace.getActiveSpan();
      if (!span) return {};
      const ctx = span.spanContext();
      return { trace_id: ctx.traceId, span_id: ctx.spanId };
    },
  });
}
