import type { JsonObject } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { PublicErrorSchema } from "@corridor/proto/corridor/common/v1/error_pb.js";
import { AppError, appErrorFromConnect, isConnectionFailure, type Outcome } from "@corridor/kit";

/** The public error body every non-2xx answer of the REST API carries. */
export interface PublicErrorBody {
  status: number;
  code: string;
  message: string;
  details: JsonObject;
}

/** The one place where a domain outcome becomes an HTTP status. */
export const OUTCOME_STATUS: Record<Outcome, number> = {
  INVALID: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  GONE: 410,
  UNPROCESSABLE: 422,
  RATE_LIMITED: 429,
  NOT_IMPLEMENTED: 501,
  UNAVAILABLE: 503,
};

/**
 * An error only the HTTP layer can have (415, 413, 414, 431): its status is HTTP's own, not a
 * domain outcome's. The outcome is the nearest one, for anything that only reads outcomes.
 */
export class HttpError extends AppError {
  constructor(
    readonly httpStatus: number,
    code: string,
    message: string,
    details: JsonObject = {},
  ) {
    super("INVALID", code, message, details);
    this.name = "HttpError";
  }
}

/**
 * Codes whose status is not their outcome's: Grid answers a locked-out customer's SCA calls with
 * 423, a status no domain outcome has (the service says FORBIDDEN).
 */
const CODE_STATUS: Readonly<Record<string, number>> = { ACCOUNT_LOCKED: 423 };

export function httpStatusOf(err: AppError): number {
  return err instanceof HttpError ? err.httpStatus : (CODE_STATUS[err.code] ?? OUTCOME_STATUS[err.outcome]);
}

export function publicBodyOf(err: AppError): PublicErrorBody {
  return { status: httpStatusOf(err), code: err.code, message: err.message, details: err.details };
}

// Failures without a service-written refusal: the transport's own (unreachable, timed out).
// Unavailable, Canceled (connect-node's answer for a call in flight when its service is killed:
// "http/2 stream closed with error code CANCEL"), Aborted (the next call on that connection:
// ECONNRESET) and DeadlineExceeded are dependency failures: 503, retry later (with Retry-After),
// never 500.
const codeToPublic: Partial<Record<Code, [number, string]>> = {
  [Code.InvalidArgument]: [400, "INVALID_INPUT"],
  [Code.Unauthenticated]: [401, "UNAUTHORIZED"],
  [Code.PermissionDenied]: [403, "FORBIDDEN"],
  [Code.NotFound]: [404, "NOT_FOUND"],
  [Code.AlreadyExists]: [409, "CONFLICT"],
  [Code.FailedPrecondition]: [409, "CONFLICT"],
  [Code.ResourceExhausted]: [429, "RATE_LIMITED"],
  [Code.Unimplemented]: [501, "NOT_IMPLEMENTED"],
  [Code.Unavailable]: [503, "SERVICE_UNAVAILABLE"],
  [Code.Aborted]: [503, "SERVICE_UNAVAILABLE"],
  [Code.Canceled]: [503, "SERVICE_UNAVAILABLE"],
  [Code.DeadlineExceeded]: [503, "UPSTREAM_TIMEOUT"],
};

/**
 * Whether a failed call never got the service's answer, so the gateway cannot tell whether its
 * effect committed: no PublicError detail (the service did not decide) and a transport failure
 * (unreachable, reset, aborted, timed out, or a socket error anywhere in the cause chain).
 */
export function isTransportFailure(err: unknown): boolean {
  if (!(err instanceof ConnectError) || err.findDetails(PublicErrorSchema).length > 0) return false;
  return TRANSPORT_CODES.has(err.code) || isConnectionFailure(err) || isRefusedStream(err);
}

/**
 * A call whose HTTP/2 stream the service refused unprocessed (RST_STREAM REFUSED_STREAM): a server
 * closing its connection refuses the streams that crossed its GOAWAY, as a replica recycling a
 * connection (CONNECT_MAX_CONNECTION_AGE_MS) or draining does. connect-node reports it as
 * internal; gRPC maps it to unavailable, and it is safe to retry.
 */
function isRefusedStream(err: ConnectError): boolean {
  return (err.code === Code.Internal || err.code === Code.Unknown) && err.rawMessage.includes("NGHTTP2_REFUSED_STREAM");
}
const TRANSPORT_CODES = new Set<Code>([Code.Unavailable, Code.Aborted, Code.DeadlineExceeded, Code.Canceled]);

/**
 * The public body for a failed service call. A service's AppError is answered as the service
 * wrote it, at its outcome's status; anything else maps by Connect code, and internal failures
 * never leak their message.
 */
export function publicErrorFromConnect(err: unknown): { body: PublicErrorBody; shouldNotRetry: boolean } {
  const refusal = appErrorFromConnect(err);
  if (refusal) return { body: publicBodyOf(refusal), shouldNotRetry: refusal.shouldNotRetry };
  const ce = ConnectError.from(err);
  let mapped = codeToPublic[ce.code];
  // A socket error in the cause chain (ECONNRESET, ECONNREFUSED) under a code that is not a 503
  // already (Unknown, Internal: however the transport wrapped it) is the same dependency failure.
  if (mapped?.[0] !== 503 && (isConnectionFailure(ce) || isRefusedStream(ce))) mapped = codeToPublic[Code.Unavailable];
  if (mapped) {
    // A 5xx without a PublicError detail comes from the transport (ECONNREFUSED, timeouts): its
    // message names internal hosts, so the client gets a generic one.
    const message = mapped[0] >= 500 ? "A service this request needs is unavailable; retry later" : ce.rawMessage;
    return { body: { status: mapped[0], code: mapped[1], message, details: {} }, shouldNotRetry: false };
  }
  return {
    body: { status: 500, code: "INTERNAL_ERROR", message: "An internal error occurred; it has been logged", details: {} },
    shouldNotRetry: false,
  };
}
