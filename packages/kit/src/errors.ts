import { Code, ConnectError } from "@connectrpc/connect";
import { create, type JsonObject } from "@bufbuild/protobuf";
import { PublicErrorSchema } from "@corridor/proto/corridor/common/v1/error_pb.js";

/** One invalid field, as listed in `details.errors` of a 400 INVALID_INPUT. */
export interface FieldError {
  field: string;
  reason: string;
}

/** The public error body every non-2xx answer of the REST API carries. */
export interface PublicErrorBody {
  status: number;
  code: string;
  message: string;
  details: JsonObject;
}

/**
 * A domain failure with a public meaning. Services throw these; `toConnectError` carries them
 * across the wire and the gateway turns them back into the same status, code and details.
 */
export class AppError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: JsonObject;
  /** Sent as `x-should-retry: false`: state conflicts that a retry cannot fix. */
  readonly shouldNotRetry: boolean;

  constructor(status: number, code: string, message: string, details: JsonObject = {}, opts: { shouldNotRetry?: boolean } = {}) {
    super(message);
    this.name = "AppError";
    this.status = status;
    this.code = code;
    this.details = details;
    this.shouldNotRetry = opts.shouldNotRetry ?? status === 409;
  }

  toBody(): PublicErrorBody {
    return { status: this.status, code: this.code, message: this.message, details: this.details };
  }
}

/** Shorthands for the common public errors. */
export const errors = {
  invalidInput: (errs: FieldError[], message?: string) =>
    new AppError(400, "INVALID_INPUT", message ?? errs.map((e) => `${e.field}: ${e.reason}`).join("; "), {
      errors: errs.map((e) => ({ field: e.field, reason: e.reason })),
    }),
  badRequest: (code: string, message: string, details: JsonObject = {}) => new AppError(400, code, message, details),
  unauthorized: (message = "Missing or invalid credentials", details: JsonObject = {}) =>
    new AppError(401, "UNAUTHORIZED", message, details),
  forbidden: (message = "This token lacks the permission this operation needs", details: JsonObject = {}) =>
    new AppError(403, "FORBIDDEN", message, details),
  notFound: (kind: string, id?: string) =>
    new AppError(404, `${kind.replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase()}_NOT_FOUND`, id ? `${kind} ${id} not found` : `${kind} not found`, id ? { id } : {}),
  conflict: (code: string, message: string, details: JsonObject = {}) => new AppError(409, code, message, details, { shouldNotRetry: true }),
  notImplemented: (message: string) => new AppError(501, "NOT_IMPLEMENTED", message),
};

const statusToCode: Record<number, Code> = {
  400: Code.InvalidArgument,
  401: Code.Unauthenticated,
  403: Code.PermissionDenied,
  404: Code.NotFound,
  409: Code.FailedPrecondition,
  410: Code.FailedPrecondition,
  422: Code.InvalidArgument,
  429: Code.ResourceExhausted,
  501: Code.Unimplemented,
  503: Code.Unavailable,
};

/** Service side: any thrown value becomes a ConnectError; AppErrors keep their public meaning. */
export function toConnectError(err: unknown): ConnectError {
  if (err instanceof AppError) {
    const detail = create(PublicErrorSchema, {
      httpStatus: err.status,
      code: err.code,
      message: err.message,
      details: err.details,
      shouldNotRetry: err.shouldNotRetry,
    });
    return new ConnectError(err.message, statusToCode[err.status] ?? Code.Internal, undefined, [
      { desc: PublicErrorSchema, value: detail },
    ]);
  }
  return ConnectError.from(err);
}

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
  [Code.DeadlineExceeded]: [504, "UPSTREAM_TIMEOUT"],
};

/**
 * Gateway side: the public body for a failed call. A PublicError detail is answered as the service
 * wrote it; anything else maps by Connect code, and internal failures never leak their message.
 */
export function publicErrorFromConnect(err: unknown): { body: PublicErrorBody; shouldNotRetry: boolean } {
  const ce = ConnectError.from(err);
  const [detail] = ce.findDetails(PublicErrorSchema);
  if (detail) {
    return {
      body: { status: detail.httpStatus, code: detail.code, message: detail.message, details: detail.details ?? {} },
      shouldNotRetry: detail.shouldNotRetry,
    };
  }
  const mapped = codeToPublic[ce.code];
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
