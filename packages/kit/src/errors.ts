import { Code, ConnectError } from "@connectrpc/connect";
import { create, type JsonObject } from "@bufbuild/protobuf";
import { PublicErrorSchema } from "@corridor/proto/corridor/common/v1/error_pb.js";

/** One invalid field, as listed in `details.errors` of an INVALID_INPUT refusal. */
export interface FieldError {
  field: string;
  reason: string;
}

/**
 * What kind of refusal a domain error is. Services speak these outcomes; only the gateway knows
 * which HTTP status each one answers with (gateway/src/http-status.ts).
 */
export const OUTCOMES = [
  /** The request is malformed or breaks a rule of the input. */
  "INVALID",
  /** Missing or wrong credentials, signature or code. */
  "UNAUTHENTICATED",
  /** The caller may not do this (permission, environment, policy). */
  "FORBIDDEN",
  /** No such record for this caller. */
  "NOT_FOUND",
  /** The record's state does not allow this now (retrying the same request will not help). */
  "CONFLICT",
  /** The record existed and is gone for good. */
  "GONE",
  /** Well formed, but cannot be processed as sent (for example an Idempotency-Key reused). */
  "UNPROCESSABLE",
  /** Too many requests; details say when to retry. */
  "RATE_LIMITED",
  /** This deployment has no implementation for it (no connector for a rail, no mailer). */
  "NOT_IMPLEMENTED",
  /** A dependency is down; retry later. */
  "UNAVAILABLE",
] as const;
export type Outcome = (typeof OUTCOMES)[number];

const isOutcome = (s: string): s is Outcome => (OUTCOMES as readonly string[]).includes(s);

/**
 * A domain failure with a public meaning: an outcome, a public UPPER_SNAKE code, a message and
 * details. Services throw these; `toConnectError` carries them across the wire and the gateway
 * answers with the outcome's HTTP status, the code and the details exactly as thrown.
 */
export class AppError extends Error {
  readonly outcome: Outcome;
  readonly code: string;
  readonly details: JsonObject;
  /** Sent as `x-should-retry: false`: state conflicts that a retry cannot fix. */
  readonly shouldNotRetry: boolean;

  constructor(outcome: Outcome, code: string, message: string, details: JsonObject = {}, opts: { shouldNotRetry?: boolean } = {}) {
    super(message);
    this.name = "AppError";
    this.outcome = outcome;
    this.code = code;
    this.details = details;
    this.shouldNotRetry = opts.shouldNotRetry ?? outcome === "CONFLICT";
  }
}

/**
 * Not-found codes that take Grid's name where Grid has one for the meaning (a customer is a
 * "user" there, a receiver lookup a "lookup request", an unknown UMA receiver "UMA_NOT_FOUND");
 * other kinds answer <KIND>_NOT_FOUND.
 */
const GRID_NOT_FOUND: Readonly<Record<string, string>> = {
  Customer: "USER_NOT_FOUND",
  Lookup: "LOOKUP_REQUEST_NOT_FOUND",
  Receiver: "UMA_NOT_FOUND",
};

export function notFoundCode(kind: string): string {
  return GRID_NOT_FOUND[kind] ?? `${kind.replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase()}_NOT_FOUND`;
}

/** An INVALID_INPUT error lists at most this many field errors (`details.errorCount` gives the total). */
export const MAX_LISTED_FIELD_ERRORS = 50;

/** Shorthands for the common public errors. */
export const errors = {
  invalidInput: (errs: FieldError[], message?: string) => {
    // Bounded whatever the request did (issue 23, finding 5): the first MAX_LISTED_FIELD_ERRORS
    // are listed, `errorCount` says how many there were.
    const listed = errs.slice(0, MAX_LISTED_FIELD_ERRORS).map((e) => ({ field: e.field, reason: e.reason }));
    const more = errs.length - listed.length;
    const text = listed.map((e) => `${e.field}: ${e.reason}`).join("; ") + (more > 0 ? `; and ${more} more` : "");
    return new AppError("INVALID", "INVALID_INPUT", message ?? text, more > 0 ? { errors: listed, errorCount: errs.length } : { errors: listed });
  },
  badRequest: (code: string, message: string, details: JsonObject = {}) => new AppError("INVALID", code, message, details),
  unauthorized: (message = "Missing or invalid credentials", details: JsonObject = {}) =>
    new AppError("UNAUTHENTICATED", "UNAUTHORIZED", message, details),
  forbidden: (message = "This token lacks the permission this operation needs", details: JsonObject = {}) =>
    new AppError("FORBIDDEN", "FORBIDDEN", message, details),
  notFound: (kind: string, id?: string) =>
    new AppError("NOT_FOUND", notFoundCode(kind), id ? `${kind} ${id} not found` : `${kind} not found`, id ? { id } : {}),
  conflict: (code: string, message: string, details: JsonObject = {}) => new AppError("CONFLICT", code, message, details, { shouldNotRetry: true }),
};

const outcomeToCode: Record<Outcome, Code> = {
  INVALID: Code.InvalidArgument,
  UNAUTHENTICATED: Code.Unauthenticated,
  FORBIDDEN: Code.PermissionDenied,
  NOT_FOUND: Code.NotFound,
  CONFLICT: Code.FailedPrecondition,
  GONE: Code.FailedPrecondition,
  UNPROCESSABLE: Code.InvalidArgument,
  RATE_LIMITED: Code.ResourceExhausted,
  NOT_IMPLEMENTED: Code.Unimplemented,
  UNAVAILABLE: Code.Unavailable,
};

/** Service side: any thrown value becomes a ConnectError; AppErrors keep their public meaning. */
export function toConnectError(err: unknown): ConnectError {
  if (err instanceof AppError) {
    const detail = create(PublicErrorSchema, {
      outcome: err.outcome,
      code: err.code,
      message: err.message,
      details: err.details,
      shouldNotRetry: err.shouldNotRetry,
    });
    return new ConnectError(err.message, outcomeToCode[err.outcome], undefined, [{ desc: PublicErrorSchema, value: detail }]);
  }
  return ConnectError.from(err);
}

/**
 * A failed call's public refusal as the AppError the other service threw, or undefined when the
 * failure has no public meaning (unreachable, deadline, internal error).
 */
export function appErrorFromConnect(err: unknown): AppError | undefined {
  if (err instanceof AppError) return err;
  if (!(err instanceof Error)) return undefined;
  const [detail] = ConnectError.from(err).findDetails(PublicErrorSchema);
  if (!detail || !isOutcome(detail.outcome)) return undefined;
  return new AppError(detail.outcome, detail.code, detail.message, detail.details ?? {}, { shouldNotRetry: detail.shouldNotRetry });
}
