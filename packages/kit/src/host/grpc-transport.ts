import type { ClientHttp2Session } from "node:http2";
import { Code, ConnectError, type Interceptor, type Transport } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { commaList } from "../config.js";

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
 * True for a call that failed because its connection could not be opened (refused: nothing listens
 * on the replica's port; or the connect itself failing: timed out, unreachable, the name not
 * resolved): the request was never sent, so any RPC may go elsewhere. Node names the failing
 * system call on the error connect-node keeps as the cause.
 */
export function isConnectFailure(err: unknown): boolean {
  if (!(err instanceof ConnectError)) return false;
  for (let cause: unknown = err.cause, depth = 0; cause instanceof Error && depth < 5; cause = cause.cause, depth++) {
    const { code, syscall } = cause as { code?: unknown; syscall?: unknown };
    if (code === "ECONNREFUSED" || syscall === "connect" || syscall === "getaddrinfo") return true;
  }
  return false;
}

/** A transport to one base URL: its own HTTP/2 session manager, refused streams sent again. */
function singleUrlTransport(baseUrl: string, interceptors: Interceptor[]): Transport {
  return createGrpcTransport({ baseUrl, interceptors: [retryRefusedStreams, ...interceptors], sessionManager: new GuardedSessionManager(baseUrl) });
}

/** What is left of a call's timeout after `since` (an attempt on another replica keeps the call's deadline). */
function remainingMs(timeoutMs: number | undefined, since: number): number | undefined {
  return timeoutMs === undefined ? undefined : Math.max(1, timeoutMs - (Date.now() - since));
}

/**
 * Client-side round robin over a service's replicas: each call goes to the next base URL in turn,
 * over that URL's own HTTP/2 connection (so calls, not connections, are spread, and a replica
 * that restarts gets calls again as soon as it accepts connections). A unary call whose connection
 * a replica refused goes on to the next one; only when every replica refused does it fail, with
 * the last refusal (Unavailable), as a single URL does. A stream is only sent to its replica in
 * turn: connect-es closes a stream's input when the attempt fails, so it cannot be sent again
 * (no service client streams today).
 */
function roundRobinTransport(transports: Transport[]): Transport {
  let next = 0;
  const inTurn = () => {
    const i = next;
    next = (next + 1) % transports.length;
    return i;
  };
  return {
    async unary(method, signal, timeoutMs, header, input, contextValues) {
      const since = Date.now();
      const first = inTurn();
      let refused: unknown;
      for (let k = 0; k < transports.length; k++) {
        try {
          return await transports[(first + k) % transports.length]!.unary(method, signal, remainingMs(timeoutMs, since), header, input, contextValues);
        } catch (err) {
          if (!isConnectFailure(err) || signal?.aborted) throw err;
          refused = err;
        }
      }
      throw refused;
    },
    stream(method, signal, timeoutMs, header, input, contextValues) {
      return transports[inTurn()]!.stream(method, signal, timeoutMs, header, input, contextValues);
    },
  };
}

/**
 * A gRPC (h2c) transport to a service: a graceful shutdown or connection recycling on the service's
 * side never crashes the caller, nor fails a call the service refused unprocessed. `baseUrl` is a
 * service URL setting: one base URL (a Kubernetes Service, one process: a plain connect-node
 * transport), or several comma-separated (the replicas of `start:split --replicas N`), called in
 * turn (roundRobinTransport), each with its own connection, refused-stream retry and GOAWAY guard.
 */
export function createServiceTransport(opts: { baseUrl: string; interceptors?: Interceptor[] }): Transport {
  const urls = commaList(opts.baseUrl);
  if (urls.length === 0) throw new Error("createServiceTransport needs a base URL");
  const transports = urls.map((url) => singleUrlTransport(url, opts.interceptors ?? []));
  return transports.length === 1 ? transports[0]! : roundRobinTransport(transports);
}
