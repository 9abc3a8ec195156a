import { ConnectError } from "@connectrpc/connect";
import type { JsonObject } from "@bufbuild/protobuf";
import { AppError, publicErrorFromConnect, type FieldError, type Logger, type PublicErrorBody } from "@corridor/kit";
import { PublicErrorSchema } from "@corridor/proto/corridor/common/v1/error_pb.js";
import type { ErrorObject } from "ajv";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";

/** The only API version this gateway serves; every public route lives under it. */
export const API_VERSION = "2025-10-13";
const DATE_SEGMENT = /^\/(\d{4}-\d{2}-\d{2})(?:\/|$|\?)/;

/**
 * Field naming convention of `details.errors[].field`: the request location (`body`, `query`,
 * `params`, `headers`) then the path inside it, dots for properties and [i] for array items:
 * `body.supportedCurrencies[0].minAmount`, `query.limit`, `params.tokenId`. A whole-body problem
 * (malformed JSON, missing body) is just `body`.
 */
export type Location = "body" | "query" | "params" | "headers";
const LOCATIONS: readonly string[] = ["body", "query", "params", "headers"];

export function fieldPath(location: Location, segments: readonly (string | number)[]): string {
  let out: string = location;
  for (const s of segments) out += typeof s === "number" || /^\d+$/.test(s) ? `[${s}]` : `.${s}`;
  return out;
}

/** Ajv errors -> field errors, one per distinct field and reason. */
export function fieldErrorsFromAjv(location: Location, errs: readonly ErrorObject[]): FieldError[] {
  const out: FieldError[] = [];
  const seen = new Set<string>();
  for (const e of errs) {
    const segments = e.instancePath
      .split("/")
      .slice(1)
      .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
    let reason = e.message ?? "is invalid";
    if (e.keyword === "required") {
      segments.push(String(e.params.missingProperty));
      reason = "is required";
    } else if (e.keyword === "additionalProperties") {
      segments.push(String(e.params.additionalProperty));
      reason = "is not a known field";
    } else if (e.keyword === "enum") {
      reason = `must be one of ${(e.params.allowedValues as unknown[]).map(String).join(", ")}`;
    } else if (e.keyword === "format") {
      reason = e.params.format === "date-time" ? "must be an ISO 8601 date-time" : `must be a valid ${e.params.format}`;
    }
    const field = fieldPath(location, segments);
    const key = `${field}\u0000${reason}`;
    if (!seen.has(key)) {
      seen.add(key);
      out.push({ field, reason });
    }
  }
  return out;
}

const contextToLocation: Record<string, Location> = { body: "body", querystring: "query", params: "params", headers: "headers" };

/** Fastify's own 4xx errors (parsing, media type, size) in the public shape. */
const fastifyClientErrors: Record<number, string> = {
  413: "PAYLOAD_TOO_LARGE",
  415: "UNSUPPORTED_MEDIA_TYPE",
};

function invalidBody(reason: string): PublicErrorBody {
  return { status: 400, code: "INVALID_INPUT", message: `body: ${reason}`, details: { errors: [{ field: "body", reason }] } };
}

/**
 * Service-raised 4xx errors name fields as the service knows them (`cursor`, `accountInfo`,
 * `lockedCurrencyAmount`). The gateway knows where the route takes its input from, so it adds the
 * location prefix — to every `details.errors[].field` and to a single `details.field`, whatever the
 * code (INVALID_INPUT, INVALID_ACCOUNT, AMOUNT_OUT_OF_RANGE, …), so one naming rule holds.
 */
function prefixServiceFields(body: PublicErrorBody, location: Location): PublicErrorBody {
  if (body.status < 400 || body.status >= 500 || !body.details) return body;
  const prefix = (field: string) => (LOCATIONS.includes(field.split(/[.[]/, 1)[0]!) ? field : `${location}.${field}`);
  const details = { ...body.details };
  let changed = false;
  const errs = details.errors;
  let message = body.message;
  if (Array.isArray(errs)) {
    const asListed = (list: unknown[]) =>
      list
        .map((e) => {
          const f = e && typeof e === "object" && !Array.isArray(e) ? (e as { field?: unknown; reason?: unknown }) : {};
          return `${String(f.field)}: ${String(f.reason)}`;
        })
        .join("; ");
    const before = asListed(errs);
    details.errors = errs.map((e) => {
      if (!e || typeof e !== "object" || Array.isArray(e) || typeof e.field !== "string") return e;
      changed = true;
      return { ...e, field: prefix(e.field) };
    });
    // A message the service built from the field list (kit's default) names the fields the same way.
    if (message === before) message = asListed(details.errors as unknown[]);
  }
  if (typeof details.field === "string" && details.field) {
    details.field = prefix(details.field);
    changed = true;
  }
  return changed ? { ...body, message, details } : body;
}

/** The challenge of a 401 from Basic authentication (RFC 9110 §11.6.1). */
export const BASIC_CHALLENGE = 'Basic realm="corridor"';

/**
 * A failed Basic authentication: the only 401 answered with `WWW-Authenticate`. The other 401s
 * (wallet signatures, OTPs, passkeys) come from services to callers whose Basic credentials were
 * fine, and a Basic challenge on them makes browsers re-prompt and some clients drop credentials.
 */
export class BasicAuthError extends AppError {
  constructor(message = "Missing or invalid credentials", details: JsonObject = {}) {
    super(401, "UNAUTHORIZED", message, details);
    this.name = "BasicAuthError";
  }
}

export function sendError(reply: FastifyReply, body: PublicErrorBody, opts: { shouldNotRetry?: boolean; basicChallenge?: boolean } = {}): FastifyReply {
  if (opts.shouldNotRetry) reply.header("x-should-retry", "false");
  if (opts.basicChallenge && body.status === 401) reply.header("www-authenticate", BASIC_CHALLENGE);
  return reply.code(body.status).type("application/json; charset=utf-8").send(body);
}

/** Turns anything thrown on a request into the public error shape; never leaks internals. */
export function toPublicError(
  err: unknown,
  request: FastifyRequest,
  log: Logger,
): { body: PublicErrorBody; shouldNotRetry: boolean; basicChallenge?: boolean } {
  const fe = err as FastifyError & { validationContext?: string };
  if (fe && Array.isArray(fe.validation)) {
    const location = contextToLocation[fe.validationContext ?? "body"] ?? "body";
    const errs = fieldErrorsFromAjv(location, fe.validation as ErrorObject[]);
    return { body: errorsInvalid(errs), shouldNotRetry: false };
  }
  if (err instanceof AppError) return { body: err.toBody(), shouldNotRetry: err.shouldNotRetry, basicChallenge: err instanceof BasicAuthError };
  if (err instanceof ConnectError) {
    const mapped = publicErrorFromConnect(err);
    if (mapped.body.status >= 500) {
      log.error({ err, url: request.url }, "service call failed");
      // Without a service-written PublicError the message is the transport's (addresses, ports).
      if (err.findDetails(PublicErrorSchema).length === 0) mapped.body = { ...mapped.body, message: genericServerMessage(mapped.body.status) };
    }
    const location: Location = request.method === "GET" || request.method === "DELETE" ? "query" : "body";
    return { body: prefixServiceFields(mapped.body, location), shouldNotRetry: mapped.shouldNotRetry };
  }
  const status = typeof fe?.statusCode === "number" ? fe.statusCode : 500;
  if (status >= 400 && status < 500) {
    if (fe.code === "FST_ERR_CTP_INVALID_JSON_BODY" || fe instanceof SyntaxError || status === 400) {
      return { body: invalidBody(fe instanceof SyntaxError || fe.code === "FST_ERR_CTP_INVALID_JSON_BODY" ? "is not valid JSON" : fe.message), shouldNotRetry: false };
    }
    const code = fastifyClientErrors[status] ?? "INVALID_REQUEST";
    return { body: { status, code, message: fe.message, details: {} }, shouldNotRetry: false };
  }
  log.error({ err, url: request.url }, "unhandled gateway error");
  return {
    body: { status: 500, code: "INTERNAL_ERROR", message: "An internal error occurred; it has been logged", details: {} },
    shouldNotRetry: false,
  };
}

function genericServerMessage(status: number): string {
  if (status === 503) return "A service is unavailable; retry later";
  if (status === 504) return "A service did not answer in time; retry later";
  return "An internal error occurred; it has been logged";
}

function errorsInvalid(errs: FieldError[]): PublicErrorBody {
  return {
    status: 400,
    code: "INVALID_INPUT",
    message: errs.map((e) => `${e.field}: ${e.reason}`).join("; ") || "invalid input",
    details: { errors: errs.map((e) => ({ field: e.field, reason: e.reason })) },
  };
}

/** 404 for unknown paths: VERSION_NOT_FOUND when the first segment is another date version. */
export function notFoundBody(url: string): PublicErrorBody {
  const m = DATE_SEGMENT.exec(url);
  if (m && m[1] !== API_VERSION) {
    return {
      status: 404,
      code: "VERSION_NOT_FOUND",
      message: `API version ${m[1]} does not exist; this server speaks ${API_VERSION}`,
      details: { version: m[1]!, supportedVersions: [API_VERSION] },
    };
  }
  return { status: 404, code: "NOT_FOUND", message: "No such route", details: {} };
}

/** Installs the error handler, the 404 handler and a JSON parser that accepts an empty body. */
export function installErrorHandling(app: FastifyInstance, log: Logger): void {
  app.setErrorHandler((err, request, reply) => {
    const { body, shouldNotRetry, basicChallenge } = toPublicError(err, request, log);
    return sendError(reply, body, { shouldNotRetry, basicChallenge });
  });
  app.setNotFoundHandler((request, reply) => sendError(reply, notFoundBody(request.url)));

  // Clients often send `content-type: application/json` with no body on POSTs that take none;
  // that is not malformed JSON. Non-empty bodies go through Fastify's own (prototype-poisoning safe) parser.
  const parseJson = app.getDefaultJsonParser("error", "error");
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (request, raw, done) => {
    const text = typeof raw === "string" ? raw : raw.toString("utf8");
    if (text.trim() === "") return done(null, undefined);
    parseJson(request, text, done);
  });
}
