import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span } from "@opentelemetry/api";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { TRACER_NAME } from "./sdk.js";

interface RequestTrace {
  span: Span;
  ctx: Context;
}

const traces = new WeakMap<FastifyRequest, RequestTrace>();

/**
 * The trace context of a gateway request (its SERVER span active), for work the request starts
 * outside Fastify's hook chain, e.g. `context.with(requestTraceContext(req), () => ...)`.
 */
export function requestTraceContext(request: FastifyRequest): Context {
  return traces.get(request)?.ctx ?? context.active();
}

/**
 * Traces every gateway request as a SERVER span `HTTP <method> <route>`, continuing an incoming
 * `traceparent`. Call it on the root instance before any route or other hook is registered.
 *
 * Fastify runs a request's hooks and handler as a chain of callbacks and promise continuations,
 * so calling the onRequest hook's `done` inside `context.with` makes the span the active context
 * for everything that follows (auth hooks, the handler, Connect calls). Body parsing is the one
 * stretch driven by socket stream events rather than by that chain; the context survives it on
 * Node 20 (tested over a real socket), but that rests on stream internals, so preValidation —
 * the first hook after parsing — enters the context again.
 */
export function registerFastifyTracing(app: FastifyInstance): void {
  app.addHook("onRequest", (request, _reply, done) => {
    const parent = propagation.extract(ROOT_CONTEXT, request.headers);
    const route = request.routeOptions.url;
    const method = request.method;
    const span = trace.getTracer(TRACER_NAME).startSpan(
      route ? `HTTP ${method} ${route}` : `HTTP ${method}`,
      {
        kind: SpanKind.SERVER,
        attributes: {
          "http.request.method": method,
          "url.path": request.url.split("?")[0],
          "url.scheme": request.protocol,
          // The id answered in Request-Id, to find the trace from what a platform quotes.
          "corridor.request_id": String(request.id),
          ...(route ? { "http.route": route } : {}),
          ...(request.headers["user-agent"] ? { "user_agent.original": request.headers["user-agent"] } : {}),
        },
      },
      parent,
    );
    const ctx = trace.setSpan(parent, span);
    traces.set(request, { span, ctx });
    context.with(ctx, done);
  });

  app.addHook("preValidation", (request, _reply, done) => {
    const t = traces.get(request);
    if (t) context.with(t.ctx, done);
    else done();
  });

  app.addHook("onError", (request, _reply, error, done) => {
    traces.get(request)?.span.recordException(error);
    done();
  });

  app.addHook("onResponse", (request, reply, done) => {
    end(request, reply.statusCode);
    done();
  });

  // A client that goes away never gets onResponse.
  app.addHook("onRequestAbort", (request, done) => {
    const t = traces.get(request);
    t?.span.setStatus({ code: SpanStatusCode.ERROR, message: "request aborted by the client" });
    end(request);
    done();
  });
}

function end(request: FastifyRequest, statusCode?: number): void {
  const t = traces.get(request);
  if (!t) return;
  traces.delete(request);
  if (statusCode !== undefined) {
    t.span.setAttribute("http.response.status_code", statusCode);
    // 4xx is the client's mistake; only server failures mark the server span as an error.
    if (statusCode >= 500) t.span.setStatus({ code: SpanStatusCode.ERROR });
  }
  t.span.end();
}
