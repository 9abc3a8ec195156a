import type { IncomingMessage } from "node:http";
import { ConnectError } from "@connectrpc/connect";
import type { JsonObject } from "@bufbuild/protobuf";
import { AppError, UNAVAILABLE_RETRY_AFTER_SECONDS, errors, type FieldError, type Logger } from "@corridor/kit";
import { HttpError, publicBodyOf, publicErrorFromConnect, type PublicErrorBody } from "./http-status.js";
import { PublicErrorSchema } from "@corridor/proto/corridor/common/v1/error_pb.js";
import type { ErrorObject } from "ajv";
import type { Duplex } from "node:stream";
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

/**
 * A nullable field (`anyOf [T, null]`, PATCH's "null clears") that fails reports each branch and
 * the anyOf itself; the value was not null, so only T's errors say what is wrong with it.
 */
function withoutNullBranches(errs: readonly ErrorObject[]): readonly ErrorObject[] {
  const nullBranch = (e: ErrorObject) => e.keyword === "type" && e.params.type === "null";
  const nullable = errs.filter((a) => a.keyword === "anyOf" && errs.some((e) => nullBranch(e) && e.schemaPath.startsWith(`${a.schemaPath}/`)));
  if (nullable.length === 0) return errs;
  return errs.filter((e) => !nullable.some((a) => e === a || (nullBranch(e) && e.schemaPath.startsWith(`${a.schemaPath}/`))));
}

/**
 * A union of literals (`anyOf [{const: A}, {const: B}]`, how TypeBox writes `Union([Literal…])`)
 * that fails reports each branch's `const` and the anyOf itself: "must be equal to constant; must
 * match a schema in anyOf". Said as the enum it is: one error listing the allowed values.
 */
function withConstUnionsAsEnums(errs: readonly ErrorObject[]): readonly ErrorObject[] {
  const under = (a: ErrorObject) => errs.filter((e) => e.schemaPath.startsWith(`${a.schemaPath}/`));
  const unions = errs.filter((a) => {
    const branches = under(a);
    return a.keyword === "anyOf" && branches.length > 0 && branches.every((e) => e.keyword === "const" && e.instancePath === a.instancePath);
  });
  if (unions.length === 0) return errs;
  const dropped = new Set(unions.flatMap((a) => under(a)));
  return errs
    .filter((e) => !dropped.has(e))
    .map((e) => (unions.includes(e) ? { ...e, keyword: "enum", params: { allowedValues: under(e).map((b) => b.params.allowedValue) } } : e));
}

/** Ajv errors -> field errors, one per distinct field and reason. */
export function fieldErrorsFromAjv(location: Location, errs: readonly ErrorObject[]): FieldError[] {
  const out: FieldError[] = [];
  const seen = new Set<string>();
  for (const e of withConstUnionsAsEnums(withoutNullBranches(errs))) {
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
    } else if (e.keyword === "const") {
      reason = `must be ${String(e.params.allowedValue)}`;
    } else if (e.keyword === "enum") {
      reason = `must be one of ${(e.params.allowedValues as unknown[]).map(String).join(", ")}`;
    } else if (e.keyword === "format") {
      reason =
        e.params.format === "date-time"
          ? "must be an ISO 8601 date-time (RFC 3339) in the years 0001 to 9999"
          : e.params.format === "date"
            ? "must be a date (YYYY-MM-DD) in the years 0001 to 9999"
            : `must be a valid ${e.params.format}`;
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
  404: "NOT_FOUND",
  405: "METHOD_NOT_ALLOWED",
  406: "NOT_ACCEPTABLE",
  408: "REQUEST_TIMEOUT",
  411: "LENGTH_REQUIRED",
  413: "PAYLOAD_TOO_LARGE",
  414: "URI_TOO_LONG",
  415: "UNSUPPORTED_MEDIA_TYPE",
  431: "HEADERS_TOO_LARGE",
};

function invalidBody(reason: string): PublicErrorBody {
  return { status: 400, code: "INVALID_INPUT", message: `body: ${reason}`, details: { errors: [{ field: "body", reason }] } };
}

/**
 * Service-raised 4xx errors name fields as the service knows them (`cursor`, `accountInfo`,
 * `lockedCurrencyAmount`). The gateway knows where the route takes its input from, so it adds the
 * location prefix — to every `details.errors[].field` and to a single `details.field`, whatever the
 * code (INVALID_INPUT, INVALID_BANK_ACCOUNT, AMOUNT_OUT_OF_RANGE, …), so one naming rule holds.
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
    // (also when it ends with "; and N more": a list the service capped).
    if (message.startsWith(before)) message = asListed(details.errors as unknown[]) + message.slice(before.length);
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
    super("UNAUTHENTICATED", "UNAUTHORIZED", message, details);
    this.name = "BasicAuthError";
  }
}

export function sendError(reply: FastifyReply, body: PublicErrorBody, opts: { shouldNotRetry?: boolean; basicChallenge?: boolean } = {}): FastifyReply {
  if (opts.shouldNotRetry) reply.header("x-should-retry", "false");
  // A dependency failure, or a first request with this Idempotency-Key still running (or whose
  // outcome is not known yet): retrying is right, after a pause.
  if ((body.status === 503 || body.code === "IDEMPOTENCY_KEY_IN_USE") && !reply.hasHeader("retry-after")) reply.header("retry-after", String(UNAVAILABLE_RETRY_AFTER_SECONDS));
  // A service's 429 says how long to wait in details.retryAfterSeconds; HTTP says it with Retry-After.
  const wait = body.details?.retryAfterSeconds;
  if (body.status === 429 && typeof wait === "number" && Number.isFinite(wait) && wait > 0 && !reply.hasHeader("retry-after")) reply.header("retry-after", String(Math.ceil(wait)));
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
  if (err instanceof AppError) return { body: publicBodyOf(err), shouldNotRetry: err.shouldNotRetry, basicChallenge: err instanceof BasicAuthError };
  if (err instanceof ConnectError) {
    const mapped = publicErrorFromConnect(err);
    if (mapped.body.status >= 500) {
      const answered = err.findDetails(PublicErrorSchema).length > 0;
      // A 5xx the service chose (a dependency it named unavailable: RATES_UNAVAILABLE,
      // EMAIL_DELIVERY_FAILED, its database) is an expected outcome the operator may want to see,
      // not a fault: warn. No answer from the service (unreachable, reset, an internal error) is.
      if (answered) log.warn({ code: mapped.body.code, url: request.url }, "service answered unavailable");
      else log.error({ err, url: request.url }, "service call failed");
      // Without a service-written PublicError the message is the transport's (addresses, ports).
      if (!answered) mapped.body = { ...mapped.body, message: genericServerMessage(mapped.body.status, mapped.body.code) };
    }
    const location: Location = request.method === "GET" || request.method === "DELETE" ? "query" : "body";
    return { body: prefixServiceFields(mapped.body, location), shouldNotRetry: mapped.shouldNotRetry };
  }
  const status = typeof fe?.statusCode === "number" ? fe.statusCode : 500;
  // JSON.parse's own error (from the body parser), or any error Fastify raises with a 4xx.
  if (fe instanceof SyntaxError) return { body: invalidBody("is not valid JSON"), shouldNotRetry: false };
  if (status >= 400 && status < 500) return { body: frameworkErrorBody(fe), shouldNotRetry: false };
  log.error({ err, url: request.url }, "unhandled gateway error");
  return {
    body: { status: 500, code: "INTERNAL_ERROR", message: "An internal error occurred; it has been logged", details: {} },
    shouldNotRetry: false,
  };
}

function genericServerMessage(status: number, code: string): string {
  if (code === "UPSTREAM_TIMEOUT") return "A service did not answer in time; retry later";
  if (status === 503) return "A service is unavailable; retry later";
  return "An internal error occurred; it has been logged";
}

function errorsInvalid(errs: FieldError[]): PublicErrorBody {
  return publicBodyOf(errors.invalidInput(errs));
}

/**
 * RFC 9112 §3.2: an HTTP/1.1 request without Host is refused with 400. Node would answer it with a
 * bare 400 and no body; the gateway turns Node's check off and refuses it here, in the error shape.
 */
export function requireHost(request: FastifyRequest): void {
  const raw = request.raw;
  if (raw.httpVersionMajor === 1 && raw.httpVersionMinor >= 1 && raw.headers.host === undefined) {
    throw new HttpError(400, "INVALID_REQUEST", "An HTTP/1.1 request must carry a Host header", { errors: [{ field: "headers.host", reason: "is required" }] });
  }
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

/**
 * The methods each served path takes, for 405 answers: Fastify's router answers a known path with
 * an unknown method as a 404; the not-found handler asks this table whether another method has
 * the path. Paths are matched segment by segment (`:param` matches any one non-empty segment,
 * `*` the rest), as the router does.
 */
export class MethodTable {
  private readonly routes: { segments: string[]; method: string }[] = [];

  add(method: string | readonly string[], url: string): void {
    const segments = url.split("/").slice(1);
    for (const m of Array.isArray(method) ? method : [method as string]) this.routes.push({ segments, method: m.toUpperCase() });
  }

  /** The methods some route serves `path` (no query) with, sorted; empty when no route has the path. */
  allowed(path: string): string[] {
    const segments = path.split("/").slice(1);
    const out = new Set<string>();
    for (const r of this.routes) {
      const wildcard = r.segments[r.segments.length - 1] === "*";
      if (wildcard ? segments.length < r.segments.length - 1 : segments.length !== r.segments.length) continue;
      const fits = r.segments.every((s, i) => s === "*" || (s.startsWith(":") ? (segments[i] ?? "") !== "" : s === segments[i]));
      if (fits) out.add(r.method);
    }
    return [...out].sort();
  }
}

/** Installs the error handler and the 404 / 405 handler (the JSON body parser is in validation.ts). */
export function installErrorHandling(app: FastifyInstance, log: Logger): void {
  const methods = new MethodTable();
  app.addHook("onRoute", (route) => methods.add(route.method, route.url));
  app.setErrorHandler(async (err, request, reply) => {
    let { body, shouldNotRetry, basicChallenge } = toPublicError(err, request, log);
    // A 415 from Fastify's parsers names what came as well as what is expected.
    if (body.code === "UNSUPPORTED_MEDIA_TYPE" && body.details && !("received" in body.details)) {
      const received = String(request.headers["content-type"] ?? "").split(";", 1)[0]!.trim().toLowerCase();
      body = { ...body, details: { ...body.details, received: received || null } };
    }
    // An oversized body is refused before it is read: the rest is read and dropped first, or the
    // connection's close would reach a client still sending as a reset instead of this 413.
    if ((err as { code?: string }).code === "FST_ERR_CTP_BODY_TOO_LARGE") await discardRequestBody(request.raw);
    return sendError(reply, body, { shouldNotRetry, basicChallenge });
  });
  app.setNotFoundHandler((request, reply) => {
    const q = request.url.indexOf("?");
    const allowed = methods.allowed(q < 0 ? request.url : request.url.slice(0, q));
    if (allowed.length > 0 && !allowed.includes(request.method)) {
      reply.header("allow", allowed.join(", "));
      return sendError(reply, {
        status: 405,
        code: "METHOD_NOT_ALLOWED",
        message: `${request.method} is not allowed on this path; it takes ${allowed.join(", ")}`,
        details: { method: request.method, allowed },
      });
    }
    return sendError(reply, notFoundBody(request.url));
  });
}

// ---------------------------------------------------------------------------------------------
// Errors raised before a request reaches a route: Fastify's router (bad percent-encoding, a path
// param over maxParamLength) and Node's HTTP parser (headers too large, bytes HTTP forbids). Both
// answer in the error shape too, instead of Fastify's `{error, statusCode}` or a bare socket close.

/** The public body of an error Fastify raises itself (router, content-type parsers, body limit). */
export function frameworkErrorBody(err: { code?: string; statusCode?: number; message?: string }): PublicErrorBody {
  switch (err.code) {
    case "FST_ERR_BAD_URL":
      return { status: 400, code: "INVALID_INPUT", message: "path: is not a valid URL path (bad percent-encoding)", details: { errors: [{ field: "path", reason: "is not a valid URL path (bad percent-encoding)" }] } };
    case "FST_ERR_MAX_PARAM_LENGTH":
      return { status: 414, code: "URI_TOO_LONG", message: "A path segment of this URL is longer than any id this API issues", details: {} };
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return { status: 413, code: "PAYLOAD_TOO_LARGE", message: "The request body is larger than 1 MiB", details: {} };
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return { status: 415, code: "UNSUPPORTED_MEDIA_TYPE", message: "Send request bodies as application/json (document uploads: multipart/form-data)", details: { expected: "application/json" } };
    case "FST_ERR_CTP_INVALID_CONTENT_LENGTH":
      return invalidBody("does not match its Content-Length");
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return invalidBody("is empty");
    case "FST_ERR_CTP_INVALID_JSON_BODY":
      return invalidBody("is not valid JSON");
  }
  const status = typeof err.statusCode === "number" && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 400;
  if (status === 400) return invalidBody(err.message || "is not valid");
  return { status, code: fastifyClientErrors[status] ?? "INVALID_REQUEST", message: err.message || "The request is not valid", details: {} };
}

/** Fastify's `frameworkErrors` option: router errors in the error shape, with a Request-Id. */
export function frameworkErrorHandler(err: { code?: string; statusCode?: number; message?: string }, request: FastifyRequest, reply: FastifyReply): void {
  reply.header("request-id", request.id);
  void sendError(reply, frameworkErrorBody(err));
}

const httpReasons: Record<number, string> = { 400: "Bad Request", 408: "Request Timeout", 431: "Request Header Fields Too Large" };

/**
 * Fastify's `clientErrorHandler` option (Node's `clientError`): a request Node's HTTP parser
 * refused never reaches Fastify, so the answer is written on the socket — still in the error shape,
 * then the connection is closed (it cannot be trusted to be in sync any more).
 */
export function clientErrorHandler(err: Error & { code?: string }, socket: Duplex): void {
  if (err.code === "ECONNRESET" || socket.destroyed) return;
  let body: PublicErrorBody;
  if (err.code === "HPE_HEADER_OVERFLOW") {
    body = { status: 431, code: "HEADERS_TOO_LARGE", message: "The request's headers are larger than this server accepts (16 KiB)", details: {} };
  } else if (err.code === "ERR_HTTP_REQUEST_TIMEOUT") {
    body = { status: 408, code: "REQUEST_TIMEOUT", message: "The request was not received in time", details: {} };
  } else {
    body = { status: 400, code: "INVALID_REQUEST", message: "The request is not valid HTTP/1.1 (request line, header names or values, or framing)", details: {} };
  }
  // Node sets this when the response to an earlier request on the socket is still being written.
  if ((socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent || !socket.writable) {
    socket.destroy(err);
    return;
  }
  const json = JSON.stringify(body);
  socket.end(
    `HTTP/1.1 ${body.status} ${httpReasons[body.status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(json)}\r\nConnection: close\r\n\r\n${json}`,
  );
}

/** How much of a refused body is read and dropped before answering (beyond it the client may see a reset). */
export const DISCARD_LIMIT_BYTES = 16 * 1024 * 1024;
/** How long a refused body is read and dropped before answering anyway. */
export const DISCARD_MS = 5_000;

/** Reads and drops what is left of a request body, up to `limitBytes` or `ms`, whichever comes first. */
export function discardRequestBody(raw: IncomingMessage, limitBytes = DISCARD_LIMIT_BYTES, ms = DISCARD_MS): Promise<void> {
  if (raw.readableEnded || raw.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    let seen = 0;
    const onData = (chunk: Buffer) => {
      seen += chunk.length;
      if (seen > limitBytes) done();
    };
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      raw.off("data", onData);
      raw.off("end", done);
      raw.off("error", done);
      raw.off("close", done);
      resolve();
    }
    raw.on("data", onData);
    raw.once("end", done);
    raw.once("error", done);
    raw.once("close", done);
    raw.resume();
  });
}
