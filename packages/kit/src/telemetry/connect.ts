import { Code, ConnectError, type Interceptor, type StreamResponse } from "@connectrpc/connect";
import { codeToString } from "@connectrpc/connect/protocol-connect";
import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
} from "@opentelemetry/api";
import { headersGetter, headersSetter } from "./propagation.js";
import { recordRpcDuration } from "./instruments.js";
import { TRACER_NAME } from "./sdk.js";

/** Health probes arrive every few seconds from load balancers; a root span each is only noise. */
const DEFAULT_IGNORED_SERVICES = ["grpc.health.v1.Health"];

export interface TracingInterceptorOptions {
  /** Fully qualified service names not to trace (default: grpc.health.v1.Health). */
  ignoreServices?: string[];
}

type Request = Parameters<Parameters<Interceptor>[0]>[0];

// gRPC and gRPC-Web both announce themselves in the content type; anything else served by
// connect-node is the Connect protocol.
function rpcSystem(header: Headers): "grpc" | "connect_rpc" {
  return (header.get("content-type") ?? "").startsWith("application/grpc") ? "grpc" : "connect_rpc";
}

function rpcAttributes(req: Request): Attributes {
  return {
    "rpc.system": rpcSystem(req.header),
    "rpc.service": req.service.typeName,
    "rpc.method": req.method.name,
  };
}

// Server-side, only codes that mean "the server failed" make the span an error (OTel RPC
// conventions); a NotFound or InvalidArgument is the caller's problem and stays unset.
const SERVER_FAULTS = new Set([
  Code.Unknown,
  Code.DeadlineExceeded,
  Code.Unimplemented,
  Code.Internal,
  Code.Unavailable,
  Code.DataLoss,
]);

function recordError(span: Span, err: unknown, system: string, side: "client" | "server"): void {
  const ce = ConnectError.from(err);
  if (system === "grpc") span.setAttribute("rpc.grpc.status_code", ce.code);
  else span.setAttribute("rpc.connect_rpc.error_code", codeToString(ce.code));
  if (side === "client" || SERVER_FAULTS.has(ce.code)) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: ce.rawMessage });
    span.recordException(ce);
  }
}

function recordOk(span: Span, system: string): void {
  if (system === "grpc") span.setAttribute("rpc.grpc.status_code", 0);
}

/**
 * Streams finish when their messages are consumed, not when `next` returns: end the span then,
 * and resume the producer inside the span's context so its nested calls stay children.
 */
function traceStream(
  res: StreamResponse,
  signal: AbortSignal,
  ctx: Context,
  onDone: (err?: unknown) => void,
): StreamResponse {
  const source = res.message;
  let finished = false;
  const finish = (err?: unknown) => {
    if (finished) return;
    finished = true;
    signal.removeEventListener("abort", onAbort);
    onDone(err);
  };
  // A cancelled call may never be iterated to the end.
  const onAbort = () => finish(new ConnectError("call cancelled", Code.Canceled));
  signal.addEventListener("abort", onAbort);
  const message: typeof source = {
    [Symbol.asyncIterator]() {
      const it = source[Symbol.asyncIterator]();
      return {
        async next() {
          try {
            const r = await context.with(ctx, () => it.next());
            if (r.done) finish();
            return r;
          } catch (err) {
            finish(err);
            throw err;
          }
        },
        async return(value?) {
          finish();
          return (await it.return?.(value)) ?? { done: true, value: undefined };
        },
        async throw(err?) {
          finish(err);
          if (it.throw) return it.throw(err);
          throw err;
        },
      };
    },
  };
  return { ...res, message };
}

/**
 * Client side of every Connect call between services: a CLIENT span `<service>/<method>`, the
 * W3C `traceparent`/`baggage` headers injected into the request, and the error code recorded.
 * Put it on every transport (in-memory and h2c) via the transport's `interceptors`.
 */
export function tracingClientInterceptor(opts: TracingInterceptorOptions = {}): Interceptor {
  const ignored = new Set(opts.ignoreServices ?? DEFAULT_IGNORED_SERVICES);
  return (next) => async (req) => {
    if (ignored.has(req.service.typeName)) return next(req);
    const attributes = rpcAttributes(req);
    const system = String(attributes["rpc.system"]);
    const tracer = trace.getTracer(TRACER_NAME);
    const span = tracer.startSpan(
      `${req.service.typeName}/${req.method.name}`,
      { kind: SpanKind.CLIENT, attributes: { ...attributes, ...serverAddress(req.url) } },
      context.active(),
    );
    const ctx = trace.setSpan(context.active(), span);
    propagation.inject(ctx, req.header, headersSetter);
    return callInSpan(next, req, span, ctx, system, "client");
  };
}

/**
 * Server side: continues the trace from the request headers (never from whatever context happens
 * to be active, so in-memory and h2c behave the same) and runs the handler inside a SERVER span, so
 * its database queries and onward calls become children. Put it first in the router's or node
 * adapter's `interceptors`, before the error-mapping interceptor, so it sees final Connect codes.
 */
export function tracingServerInterceptor(opts: TracingInterceptorOptions = {}): Interceptor {
  const ignored = new Set(opts.ignoreServices ?? DEFAULT_IGNORED_SERVICES);
  return (next) => async (req) => {
    if (ignored.has(req.service.typeName)) return next(req);
    const attributes = rpcAttributes(req);
    const system = String(attributes["rpc.system"]);
    const parent = propagation.extract(ROOT_CONTEXT, req.header, headersGetter);
    const tracer = trace.getTracer(TRACER_NAME);
    const span = tracer.startSpan(
      `${req.service.typeName}/${req.method.name}`,
      { kind: SpanKind.SERVER, attributes },
      parent,
    );
    const ctx = trace.setSpan(parent, span);
    return callInSpan(next, req, span, ctx, system, "server");
  };
}

async function callInSpan(
  next: Parameters<Interceptor>[0],
  req: Request,
  span: Span,
  ctx: Context,
  system: string,
  side: "client" | "server",
) {
  const started = performance.now();
  const done = (err?: unknown) => {
    if (err === undefined) recordOk(span, system);
    else recordError(span, err, system, side);
    span.end();
    // rpc.grpc.status_code for every system: Connect's codes are gRPC's numbers.
    recordRpcDuration(side, (performance.now() - started) / 1000, {
      "rpc.system": system,
      "rpc.service": req.service.typeName,
      "rpc.method": req.method.name,
      "rpc.grpc.status_code": err === undefined ? 0 : ConnectError.from(err).code,
    });
  };
  let res;
  try {
    res = await context.with(ctx, () => next(req));
  } catch (err) {
    done(err);
    throw err;
  }
  if (!res.stream) {
    done();
    return res;
  }
  return traceStream(res, req.signal, ctx, done);
}

function serverAddress(url: string): Attributes {
  try {
    const u = new URL(url);
    return u.port
      ? { "server.address": u.hostname, "server.port": Number(u.port) }
      : { "server.address": u.hostname };
  } catch {
    return {};
  }
}
