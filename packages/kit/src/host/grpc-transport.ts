import type { ClientHttp2Session } from "node:http2";
import { Code, ConnectError, type Interceptor, type Transport } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";

/**
 * Connect's HTTP/2 session manager (@connectrpc/connect-node 2.2.0) destroys a connection that
 * receives a GOAWAY with no open stream (a service shutting down gracefully, a rolling deploy, an
 * idle timeout at a proxy) with an error Node raises on the session once its socket has closed. When
 * a request arrives in between, the manager leaves the connection and removes its error listeners
 * first, and the deferred error becomes an uncaught exception that kills the caller (connect-es
 * issue 1768, open when this was written). The guard adds a listener of its own to every connection
 * the manager adopts, for the life of the connection: the manager still handles the error while it
 * listens; once it has left, the late error of a connection nobody uses is dropped.
 */
const GUARDED = Symbol.for("corridor.connect-node.goawayGuard");

interface ManagerState {
  t: string;
  conn?: ClientHttp2Session;
}

class GuardedSessionManager extends Http2SessionManager {}
{
  const proto = Http2SessionManager.prototype as unknown as { setState?: (this: unknown, state: ManagerState) => void };
  const setState = proto.setState;
  // Only the release whose internals this reads: another one is used as it is.
  if (typeof setState === "function") {
    (GuardedSessionManager.prototype as unknown as { setState: (state: ManagerState) => void }).setState = function (this: unknown, state: ManagerState) {
      const conn = state?.t === "ready" ? state.conn : undefined;
      if (conn && !(conn as unknown as Record<symbol, boolean>)[GUARDED]) {
        (conn as unknown as Record<symbol, boolean>)[GUARDED] = true;
        conn.on("error", () => {});
      }
      setState.call(this, state);
    };
  }
}

/**
 * True for a stream the server refused unprocessed (HTTP/2 REFUSED_STREAM, RFC 9113 §8.7): a
 * request sent on a connection the server had just closed gracefully (GOAWAY: a drain, or
 * CONNECT_MAX_CONNECTION_AGE_MS recycling). Node reports it as ERR_HTTP2_STREAM_ERROR naming the
 * code; connect-node as Unavailable or Internal depending on where it surfaced.
 */
export function isRefusedStream(err: unknown): boolean {
  if (!(err instanceof ConnectError) || (err.code !== Code.Internal && err.code !== Code.Unavailable)) return false;
  const texts = [err.rawMessage, (err.cause as { message?: string } | undefined)?.message ?? ""];
  return texts.some((t) => t.includes("REFUSED_STREAM"));
}

/** How often a refused unary call is sent again (each on a new or still-open connection). */
const REFUSED_STREAM_ATTEMPTS = 3;

/**
 * Sends a unary call again when the server refused its stream: the server did not process it, so
 * the retry cannot apply anything twice (and every mutating RPC is idempotent by key besides).
 */
const retryRefusedStreams: Interceptor = (next) => async (req) => {
  if (req.stream) return next(req);
  for (let attempt = 1; ; attempt++) {
    try {
      return await next(req);
    } catch (err) {
      if (attempt >= REFUSED_STREAM_ATTEMPTS || !isRefusedStream(err) || req.signal.aborted) throw err;
    }
  }
};

/**
 * A gRPC (h2c) transport to a service: a graceful shutdown or connection recycling on the service's
 * side never crashes the caller, nor fails a call the service refused unprocessed.
 */
export function createServiceTransport(opts: { baseUrl: string; interceptors?: Interceptor[] }): Transport {
  return createGrpcTransport({ baseUrl: opts.baseUrl, interceptors: [retryRefusedStreams, ...(opts.interceptors ?? [])], sessionManager: new GuardedSessionManager(opts.baseUrl) });
}
