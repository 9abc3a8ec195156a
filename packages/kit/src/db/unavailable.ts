import type { PostgresPool, PostgresPoolClient } from "kysely";
import { AppError } from "../errors.js";
import { sqlStateOf } from "./input-errors.js";

/**
 * Socket errors of a connection to a dependency (database, Redis, another service's port): the
 * server is down, restarting, unreachable or dropped the connection. Node's `code` on the error.
 */
const SOCKET_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN", "ECONNABORTED"]);

/**
 * SQLSTATEs of a server that is going away or not accepting work: class 08 (connection
 * exception), 57P01 admin_shutdown (a restart, pg_terminate_backend), 57P02 crash_shutdown, 57P03
 * cannot_connect_now (starting up, in recovery), 57P05 idle_session_timeout, 53300
 * too_many_connections.
 */
const UNAVAILABLE_SQLSTATES = new Set(["57P01", "57P02", "57P03", "57P05", "53300"]);

/**
 * node-postgres reports a connection that ended under it with these errors, which carry no `code`
 * (pg 8: client.js and pg-pool). They are matched here, in this one place, because the driver gives
 * nothing else to tell them by.
 */
const PG_CONNECTION_MESSAGES = [
  "Connection terminated unexpectedly",
  "Connection terminated",
  "Client has encountered a connection error and is not queryable",
  "Client was closed and is not queryable",
  "timeout exceeded when trying to connect",
  "Connection terminated due to connection timeout",
];

/**
 * Whether `err` says a dependency could not be reached or dropped the connection (as opposed to a
 * refusal, a bug or a bad value): a lost or refused database connection, a server shutting down,
 * a socket error. Looks through `cause` chains and AggregateError members (Node reports a refused
 * connection to a name with several addresses as an AggregateError).
 */
export function isConnectionFailure(err: unknown): boolean {
  const seen = new Set<unknown>();
  const visit = (e: unknown, depth: number): boolean => {
    if (!e || typeof e !== "object" || depth > 6 || seen.has(e)) return false;
    seen.add(e);
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && (SOCKET_CODES.has(code) || UNAVAILABLE_SQLSTATES.has(code) || /^08[0-9A-Z]{3}$/.test(code))) return true;
    const message = (e as { message?: unknown }).message;
    if (typeof message === "string" && PG_CONNECTION_MESSAGES.includes(message)) return true;
    if (Array.isArray((e as { errors?: unknown }).errors) && (e as { errors: unknown[] }).errors.some((m) => visit(m, depth + 1))) return true;
    return visit((e as { cause?: unknown }).cause, depth + 1);
  };
  if (visit(err, 0)) return true;
  // A SQLSTATE anywhere in the chain (sqlStateOf) of the classes above.
  const state = sqlStateOf(err);
  return state !== undefined && (UNAVAILABLE_SQLSTATES.has(state) || state.startsWith("08"));
}

/** Seconds a client is told to wait (the gateway's Retry-After on every 503) before retrying. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 2;

/** The public refusal for a dependency that failed: 503 SERVICE_UNAVAILABLE, retry later. */
export function serviceUnavailable(message = "A dependency of this service is unavailable; retry later"): AppError {
  return new AppError("UNAVAILABLE", "SERVICE_UNAVAILABLE", message);
}

/**
 * SQLSTATEs of a transaction PostgreSQL rolled back because of concurrent ones, which succeeds when
 * run again: 40P01 deadlock_detected, 40001 serialization_failure, 55P03 lock_not_available (a
 * lock_timeout). Nothing of the transaction stayed, so the client's retry under its
 * Idempotency-Key is safe.
 */
const TRANSIENT_SQLSTATES = new Set(["40P01", "40001", "55P03"]);

/** Whether PostgreSQL rolled the statement's transaction back for concurrency (retry it). */
export function isTransientConflict(err: unknown): boolean {
  const state = sqlStateOf(err);
  return state !== undefined && TRANSIENT_SQLSTATES.has(state);
}

/**
 * The one classification every service's errors go through (the host's error interceptor): a
 * connection failure, or a transaction rolled back for concurrency, becomes UNAVAILABLE
 * SERVICE_UNAVAILABLE (the gateway answers 503 with Retry-After), never an unknown error (500).
 * Undefined for any other error. The message is generic: the cause names hosts and ports.
 */
export function unavailableFromDependency(err: unknown): AppError | undefined {
  if (err instanceof AppError) return undefined;
  if (isTransientConflict(err)) return serviceUnavailable("The request met concurrent ones and was rolled back, changing nothing; retry it");
  return isConnectionFailure(err) ? serviceUnavailable() : undefined;
}

/**
 * The pool Kysely uses, whose clients are destroyed on release when a statement on them failed
 * with a connection failure. A statement in flight when the server terminates its backend (57P01)
 * fails before the socket closes, so the client would otherwise go back to the pool still looking
 * usable and fail the next request that draws it; destroyed, the next request gets a new connection.
 */
export function droppingLostConnections(pool: PostgresPool): PostgresPool {
  const wrap = (client: PostgresPoolClient): PostgresPoolClient => {
    let lost = false;
    return {
      get processID() {
        return client.processID;
      },
      release: (destroy?: boolean) => client.release(destroy || lost),
      query(...args: unknown[]): any {
        const res = (client.query as (...a: unknown[]) => unknown)(...args);
        if (!(res instanceof Promise)) return res;
        return res.catch((err: unknown) => {
          if (isConnectionFailure(err)) lost = true;
          throw err;
        });
      },
    } as PostgresPoolClient;
  };
  return {
    ...(pool.Client ? { Client: pool.Client } : {}),
    options: pool.options,
    connect: async () => wrap(await pool.connect()),
    end: () => pool.end(),
  };
}
