import { context, propagation, ROOT_CONTEXT, type Context, type TextMapGetter, type TextMapSetter } from "@opentelemetry/api";

/** Reads and writes W3C trace headers on a fetch-style Headers object (what Connect uses). */
export const headersGetter: TextMapGetter<Headers> = {
  keys: (carrier) => [...carrier.keys()],
  get: (carrier, key) => carrier.get(key) ?? undefined,
};
export const headersSetter: TextMapSetter<Headers> = {
  set: (carrier, key, value) => carrier.set(key, value),
};

/**
 * The current trace context as plain string headers (`traceparent`, `baggage`), for carriers that
 * are not HTTP requests, such as bus message headers written by the outbox.
 */
export function traceHeaders(ctx: Context = context.active()): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  return carrier;
}

/**
 * The trace context carried by incoming headers, on top of the root context: what a consumer or
 * server continues, whatever happens to be active in this process.
 */
export function contextFromHeaders(headers: Record<string, string | string[] | undefined>): Context {
  return propagation.extract(ROOT_CONTEXT, headers, {
    keys: (c) => Object.keys(c),
    get: (c, key) => {
      const v = c[key] ?? c[key.toLowerCase()];
      return Array.isArray(v) ? v[0] : v;
    },
  });
}
