import { errors, isStorableTime, textProblem, type FieldError } from "@corridor/kit";
import { Ajv, type ErrorObject, type Options } from "ajv";
import addFormatsModule from "ajv-formats";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { TSchema } from "typebox";
import { HttpError } from "./http-status.js";
import { fieldPath } from "./errors.js";
import type { LazyCompilers } from "./lazy-compile.js";

type FormatsPlugin = ((ajv: Ajv) => Ajv) & { get(name: string, mode?: "full" | "fast"): unknown };
// ajv-formats is CommonJS: under NodeNext its default import is the module object on some paths.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as FormatsPlugin;

/**
 * How deep a JSON body may nest. The deepest body the API defines nests 4 levels; 32 leaves room
 * and keeps every recursive walk of a body (validation, canonical JSON, mapping) far from the stack
 * limit. Deeper → 400 INVALID_INPUT on `body`, before anything parses it.
 */
export const MAX_JSON_DEPTH = 32;
/** Largest request body, bytes (413 PAYLOAD_TOO_LARGE beyond). */
export const BODY_LIMIT_BYTES = 1024 * 1024;
/** At most this many field errors are listed for text problems (the first ones found). */
const MAX_TEXT_ERRORS = 20;

const common: Options = {
  useDefaults: true,
  // Unknown body fields are rejected (schemas say additionalProperties: false), never silently dropped.
  removeAdditional: false,
  // Report every bad field at once.
  allErrors: true,
  strict: false,
  // oneOf with an OpenAPI discriminator checks only the branch its tag names (clean field errors).
  discriminator: true,
};

function fullFormat(name: string): (s: string) => boolean {
  const f = addFormats.get(name, "full") as ((s: string) => boolean) | { validate: (s: string) => boolean };
  return typeof f === "function" ? f : f.validate;
}

/**
 * Dates the API can store: the RFC 3339 forms ajv-formats checks, and only instants in years
 * 0001–9999 (what Postgres, protobuf Timestamps and RFC 3339 all hold; `9999-12-31T23:59:59-23:59`
 * is year 10000 and is refused). JSON Schema `date-time` alone lets through instants JS cannot even
 * represent (leap second 60), and years Postgres refuses.
 */
function storableFormats(ajv: Ajv): Ajv {
  const dateTime = fullFormat("date-time");
  const date = fullFormat("date");
  ajv.addFormat("date-time", { type: "string", validate: (s: string) => dateTime(s) && isStorableTime(Date.parse(s)) });
  ajv.addFormat("date", { type: "string", validate: (s: string) => date(s) && !s.startsWith("0000") });
  return ajv;
}

type Validate = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };

/**
 * Query strings, params and headers arrive as strings that Ajv coerces (`limit=20` -> 20). Its
 * coercion takes anything `Number()` takes: `0x10`, `1e1`, ` 5`. Numbers in a query or path are
 * decimal only: checked on the raw string, before Ajv coerces it.
 */
function decimalOnly(schema: unknown, validate: Validate): Validate {
  const props = (schema as { properties?: Record<string, { type?: unknown }> })?.properties ?? {};
  const numeric = Object.entries(props).filter(([, s]) => s && (s.type === "integer" || s.type === "number"));
  if (numeric.length === 0) return validate;
  const wrapped: Validate = (data) => {
    const errs: ErrorObject[] = [];
    if (data && typeof data === "object") {
      for (const [name, s] of numeric) {
        const value = (data as Record<string, unknown>)[name];
        const pattern = s.type === "integer" ? /^-?(0|[1-9][0-9]*)$/ : /^-?(0|[1-9][0-9]*)(\.[0-9]+)?$/;
        for (const v of Array.isArray(value) ? value : [value]) {
          if (typeof v === "string" && !pattern.test(v)) {
            errs.push({
              instancePath: `/${name}`,
              schemaPath: `#/properties/${name}/type`,
              keyword: "type",
              params: { type: s.type },
              message: s.type === "integer" ? "must be a decimal integer" : "must be a decimal number",
            });
          }
        }
      }
    }
    if (errs.length > 0) {
      wrapped.errors = errs;
      return false;
    }
    const ok = validate(data);
    wrapped.errors = validate.errors;
    return ok;
  };
  return wrapped;
}

/**
 * Two validators: query strings, params and headers arrive as strings and are coerced
 * (`limit=20` -> 20, decimal only), while JSON bodies are checked as sent (`"minAmount": "100"` is
 * an error). Both know the shared `$id` schemas so routes can `$ref` them. Also installs the JSON
 * body parser and the text check of every request (see checkRequestText). With `lazy`, each
 * route's validator is compiled on its first request (lazy-compile.ts), else at registration.
 */
export function installValidators(app: FastifyInstance, sharedSchemas: readonly TSchema[], lazy?: LazyCompilers): void {
  const bodyAjv = storableFormats(addFormats(new Ajv({ ...common, coerceTypes: false })));
  const stringAjv = storableFormats(addFormats(new Ajv({ ...common, coerceTypes: "array" })));
  for (const schema of sharedSchemas) {
    bodyAjv.addSchema(schema);
    stringAjv.addSchema(schema);
    app.addSchema(schema);
  }
  const compile = (schema: unknown, httpPart: string | undefined): Validate =>
    httpPart === "body" ? (bodyAjv.compile(schema as object) as Validate) : decimalOnly(schema, stringAjv.compile(schema as object) as Validate);
  app.setValidatorCompiler(({ schema, httpPart }) => (lazy ? lazy.validator(() => compile(schema, httpPart)) : compile(schema, httpPart)));
  installJsonParser(app);
  app.addHook("preValidation", async (request) => {
    checkRequestText(request);
    checkIdSegments(request);
    checkBodyMediaType(request);
  });
}

/** A path parameter whose schema is an id pattern (`^Customer:...`): its prefix without the colon. */
function idPrefix(schema: unknown): string | undefined {
  const pattern = (schema as { pattern?: unknown } | undefined)?.pattern;
  return typeof pattern === "string" ? /^\^([A-Za-z]+):/.exec(pattern)?.[1] : undefined;
}

/**
 * A path segment where a route takes an id (`Customer:<uuid>`) that is no id of any kind (no
 * `Prefix:` at all, like `/customers/end-user-terms` or `/customers/nope`) names a path the API
 * does not serve: 404 NOT_FOUND, as for any unknown path. A value in an id's form that is wrong in
 * its details (another prefix, a bad uuid) stays a 400 INVALID_INPUT naming params.<name>.
 */
export function checkIdSegments(request: FastifyRequest): void {
  const declared = (request.routeOptions.schema?.params as { properties?: Record<string, unknown> } | undefined)?.properties;
  if (!declared) return;
  const params = (request.params ?? {}) as Record<string, unknown>;
  for (const [name, schema] of Object.entries(declared)) {
    const prefix = idPrefix(schema);
    const value = params[name];
    if (prefix && typeof value === "string" && !value.includes(":")) {
      throw new HttpError(404, "NOT_FOUND", `No such route: a ${prefix} id goes here (${prefix}:<uuid>), and no route has this path`, { param: name });
    }
  }
}

/** The media type of a Content-Type header value, lower case, without parameters. */
const mediaType = (header: unknown) => String(header ?? "").split(";", 1)[0]!.trim().toLowerCase();

/**
 * A route that takes a JSON body refuses a body of another media type with 415
 * UNSUPPORTED_MEDIA_TYPE naming the one it takes (details.expected, details.received), instead of
 * parsing it as something else (text/plain would reach validation as a string, multipart/form-data
 * as nothing) and answering a 400 about the body's fields.
 */
export function checkBodyMediaType(request: FastifyRequest): void {
  if (!takesBody(request)) return;
  const headers = request.headers;
  const sent = headers["transfer-encoding"] !== undefined || (headers["content-length"] !== undefined && headers["content-length"] !== "0");
  if (!sent) return;
  const received = mediaType(headers["content-type"]);
  // A route declares what it consumes (document uploads: multipart/form-data); JSON otherwise.
  const consumes = ((request.routeOptions.schema as { consumes?: string[] } | undefined)?.consumes ?? ["application/json"]).map((c) => c.toLowerCase());
  if (consumes.includes(received)) return;
  const expected = consumes[0]!;
  throw new HttpError(415, "UNSUPPORTED_MEDIA_TYPE", `This route takes ${expected === "application/json" ? "an" : "a"} ${expected} body; ${received ? `${received} is not accepted` : "the body has no Content-Type"}`, {
    expected,
    received: received || null,
  });
}

// ---------------------------------------------------------------------------------------------
// JSON bodies.

const invalidBody = (reason: string) => errors.invalidInput([{ field: "body", reason }]);
const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * How many values one JSON body may hold (object members and array items, at every depth). The
 * largest body the API defines holds a few hundred; 10,000 leaves room. More is refused before the
 * body is parsed: a body of 100,000 unknown keys would otherwise cost the parser, the validator and
 * the error list each a walk of all of them (issue 23, finding 5).
 */
export const MAX_JSON_MEMBERS = 10_000;

/**
 * The nesting depth and the number of separated values (commas outside strings, + 1 per non-empty
 * container) of JSON text, in one pass; stops as soon as either passes its limit.
 */
export function jsonShape(text: string, maxDepth = Infinity, maxMembers = Infinity): { depth: number; members: number } {
  let depth = 0;
  let max = 0;
  let members = 0;
  let inString = false;
  let opened = false; // the last structural character was [ or { (an empty container holds nothing)
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) continue;
    if (opened && c !== 0x5d && c !== 0x7d) members++;
    opened = false;
    if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      opened = true;
      if (++depth > max && (max = depth) > maxDepth) break;
    } else if (c === 0x5d || c === 0x7d) depth--;
    else if (c === 0x2c && ++members > maxMembers) break;
  }
  return { depth: max, members };
}

/** The nesting depth of JSON text, brackets inside strings not counted; stops early past `limit`. */
export function jsonDepth(text: string, limit = Infinity): number {
  return jsonShape(text, limit).depth;
}

/**
 * The only JSON parser: UTF-8 only (invalid bytes, or another declared charset, are refused, not
 * replaced by U+FFFD), an empty body is no body (clients send `content-type: application/json` on
 * POSTs that take none), at most MAX_JSON_DEPTH levels, then Fastify's own prototype-poisoning-safe
 * parser. Every refusal is a 400 INVALID_INPUT on `body` (415 for another charset). At most
 * MAX_JSON_MEMBERS values.
 */
function installJsonParser(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser("error", "error");
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "buffer", bodyLimit: BODY_LIMIT_BYTES }, (request, raw, done) => {
    const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(String(request.headers["content-type"] ?? ""))?.[1]?.toLowerCase();
    if (charset !== undefined && charset !== "utf-8" && charset !== "utf8") {
      return done(new HttpError(415, "UNSUPPORTED_MEDIA_TYPE", `JSON bodies are UTF-8; charset ${charset} is not supported`, { contentType: String(request.headers["content-type"]) }), undefined);
    }
    let text: string;
    try {
      text = utf8.decode(raw as Buffer); // also drops a leading byte order mark
    } catch {
      return done(invalidBody("is not valid UTF-8"), undefined);
    }
    if (text.trim() === "") return done(null, undefined);
    const shape = jsonShape(text, MAX_JSON_DEPTH, MAX_JSON_MEMBERS);
    if (shape.depth > MAX_JSON_DEPTH) return done(invalidBody(`nests deeper than ${MAX_JSON_DEPTH} levels`), undefined);
    if (shape.members > MAX_JSON_MEMBERS) return done(invalidBody(`holds more than ${MAX_JSON_MEMBERS} values (object members and array items)`), undefined);
    parseJson(request, text, done);
  });
}

// ---------------------------------------------------------------------------------------------
// Text at the edge.

/** Whether a route declares a body (routes without one refuse any but an empty one). */
const takesBody = (request: FastifyRequest) => request.routeOptions.schema?.body !== undefined;

/**
 * Every string a request brings — body strings and keys at any depth, query values, path params,
 * the headers its route declares — must be storable text: no NUL (Postgres refuses it in text and
 * jsonb) and no lone surrogate (it would be silently stored as U+FFFD). Query components must be
 * valid percent-encoded UTF-8. A route that takes no body refuses a non-empty one. Refusals are one
 * 400 INVALID_INPUT naming each field with its location (`body.a.b[0]`, `query.x`, `params.id`).
 */
export function checkRequestText(request: FastifyRequest): void {
  if (request.is404) return;
  const problems: FieldError[] = [];
  const add = (field: string, reason: string) => {
    if (problems.length < MAX_TEXT_ERRORS) problems.push({ field, reason });
  };

  const q = request.url.indexOf("?");
  if (q >= 0) {
    for (const pair of request.url.slice(q + 1).split("&")) {
      const eq = pair.indexOf("=");
      const [rawKey, rawValue] = eq < 0 ? [pair, ""] : [pair.slice(0, eq), pair.slice(eq + 1)];
      const key = safeDecode(rawKey);
      if (key === undefined) add("query", "has a parameter name that is not valid percent-encoded UTF-8");
      else if (safeDecode(rawValue) === undefined) add(fieldPath("query", [key]), "is not valid percent-encoded UTF-8");
    }
  }
  checkFlat("query", request.query, add);
  checkFlat("params", request.params, add);
  const declaredHeaders = (request.routeOptions.schema?.headers as { properties?: Record<string, unknown> } | undefined)?.properties;
  if (declaredHeaders) {
    const headers = request.headers as Record<string, unknown>;
    checkFlat("headers", Object.fromEntries(Object.keys(declaredHeaders).map((h) => [h, headers[h]])), add);
  }

  const body = request.body;
  if (!takesBody(request)) {
    const empty = body === undefined || (body !== null && typeof body === "object" && !Array.isArray(body) && Object.keys(body).length === 0);
    if (!empty) add("body", "must be empty: this route takes no body");
  } else if (body !== undefined) {
    checkTree(body, add);
  }
  if (problems.length > 0) throw errors.invalidInput(problems);
}

function safeDecode(component: string): string | undefined {
  try {
    return decodeURIComponent(component.replace(/\+/g, " "));
  } catch {
    return undefined;
  }
}

/** A location whose values are strings or lists of strings (query, params, headers). */
function checkFlat(location: "query" | "params" | "headers", values: unknown, add: (field: string, reason: string) => void): void {
  if (!values || typeof values !== "object") return;
  for (const [name, value] of Object.entries(values)) {
    const nameProblem = textProblem(name);
    if (nameProblem) {
      add(location, `has a parameter name that ${nameProblem}`);
      continue;
    }
    for (const v of Array.isArray(value) ? value : [value]) {
      const problem = typeof v === "string" ? textProblem(v) : undefined;
      if (problem) {
        add(fieldPath(location, [name]), problem);
        break;
      }
    }
  }
}

/** Strings and keys of a parsed JSON body, at any depth (bounded by MAX_JSON_DEPTH), without recursion. */
function checkTree(body: unknown, add: (field: string, reason: string) => void): void {
  const stack: { value: unknown; at: (string | number)[] }[] = [{ value: body, at: [] }];
  while (stack.length > 0) {
    const { value, at } = stack.pop()!;
    if (typeof value === "string") {
      const problem = textProblem(value);
      if (problem) add(fieldPath("body", at), problem);
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], at: [...at, i] });
    } else if (value !== null && typeof value === "object") {
      const entries = Object.entries(value);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, member] = entries[i]!;
        const keyProblem = textProblem(key);
        if (keyProblem) add(fieldPath("body", at), `has a key that ${keyProblem}`);
        else stack.push({ value: member, at: [...at, key] });
      }
    }
  }
}
