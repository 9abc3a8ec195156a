// Issue "Hardening", defect 1: never a 500 for anything a client sent, and every non-2xx answer in
// the error shape {status, code, message, details} (decisions §3).
//
// The requests are generated from the served OpenAPI document, so every route is covered, the ones
// added later included: for each operation a plausible request is built from its schemas (with the
// ids of real resources where the list routes show some), then mutated — NUL and lone surrogates in
// every kind of input (body strings and keys, query values, path ids, Basic credentials, headers),
// deep and malformed JSON, huge strings, forged cursors and out-of-range dates, non-decimal
// integers, wrong content types, bodies on routes that take none. Deterministic (fixed seed) and
// bounded (a cap of cases per route), with the credentials of a real sandbox platform so the
// requests pass authentication and reach the services; the /agents/me routes get an agent's
// Bearer token when an agent can be connected.
import { connect } from "node:net";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { individual } from "./customers-fixtures.js";
import { mode, skipReason, startTestSystem, type Caller, type TestSystem } from "./harness.js";
import { seededRandom } from "@corridor/kit/testing";

const SEED = 20251013;
/** Cases per operation, at most (a deterministic sample of the generated ones; the first few are always kept). */
const CASES_PER_OPERATION = Number(process.env.FUZZ_CASES_PER_OPERATION ?? 90);
const CONCURRENCY = 4;
/** Requests each API token sends before the next one takes over (the rate limit is per token). */
const REQUESTS_PER_TOKEN = 300;

type Json = any;
type Schema = Record<string, any>;

interface Operation {
  method: string;
  /** OpenAPI path, e.g. /tokens/{tokenId}. */
  path: string;
  op: Json;
}

interface Case {
  name: string;
  method: string;
  /** Path with params filled in (already percent-encoded where needed), relative to the API version. */
  path: string;
  query?: string;
  headers?: Record<string, string>;
  /** Omit the Authorization header the case would otherwise get. */
  noAuth?: boolean;
  body?: string | Buffer;
}

interface Outcome {
  status: number;
  body: unknown;
  text: string;
}

// ---------------------------------------------------------------------------------------------
// Deterministic randomness.

const rand = seededRandom(SEED);
const shuffle = <T>(items: T[]): T[] => {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
};
/** Arbitrary strings (any code unit, lone surrogates and controls included), the same every run. */
const junkStrings = fc.sample(fc.string({ unit: "binary", minLength: 1, maxLength: 12 }), { seed: SEED, numRuns: 40 });
const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;
/** Arbitrary JSON values (any shape, strings with any code unit), the same every run. */
const junkJson = fc.sample(fc.jsonValue({ maxDepth: 3, stringUnit: "binary" }), { seed: SEED, numRuns: 300 });

// ---------------------------------------------------------------------------------------------
// Hostile values.

const NUL = "a\u0000b";
const LONE_HIGH = "x\uD800y";
const LONE_LOW = "\uDC00";
const HUGE = "h".repeat(300_000);
const b64url = (v: unknown) => Buffer.from(typeof v === "string" ? v : JSON.stringify(v)).toString("base64url");
const CURSORS: Record<string, string> = {
  "cursor: year -271821": b64url({ k: "-271821-04-20T00:00:00.000Z", id: "x" }),
  "cursor: year +275760": b64url({ k: "+275760-09-13T00:00:00.000Z", id: "x" }),
  "cursor: year 0": b64url({ k: "0000-01-01T00:00:00.000Z", id: "x" }),
  "cursor: NUL id": b64url({ k: "2025-01-01T00:00:00.000Z", id: "\u0000" }),
  "cursor: lone surrogate id": b64url(`{"k":"2025-01-01T00:00:00.000Z","id":"\\ud800"}`),
  "cursor: NUL key": b64url({ k: "\u0000", id: "x" }),
  "cursor: huge id": b64url({ k: "2025-01-01T00:00:00.000Z", id: "i".repeat(700) }),
  "cursor: not JSON": b64url("\u0000\u0001garbage"),
  "cursor: deep JSON": b64url("[".repeat(300)),
};
const BAD_DATES = ["275760-09-13T00:00:00Z", "+275760-09-13T00:00:00.000Z", "-271821-04-20T00:00:00.000Z", "0000-01-01T00:00:00Z", "9999-12-31T23:59:60Z", "2024-02-30T00:00:00Z", "9999-12-31T23:59:59-23:59"];
const BAD_INTEGERS = ["0x10", "1e1", " 5", "5 ", "+5", "-0", "1.0", "99999999999999999999999", "NaN", "Infinity"];
/** Path segments (already percent-encoded). */
const BAD_PATH_IDS = ["%00", "x%00y", "%ED%A0%80", "%FF", "%C0%80", "%E2%82", "i".repeat(400), "%2e%2e", "a%2Fb", "%25", encodeURIComponent("\u200b\ufeff")];

/** A Basic header whose decoded text is `text` (any bytes). */
const basicOf = (bytes: Buffer | string) => `Basic ${Buffer.from(bytes).toString("base64")}`;

// ---------------------------------------------------------------------------------------------
// Requests built from the OpenAPI schemas.

function deref(doc: Json, s: Schema | undefined): Schema {
  let out = s ?? {};
  for (let i = 0; i < 10 && typeof out.$ref === "string"; i++) out = doc.components?.schemas?.[out.$ref.split("/").pop()!] ?? {};
  return out;
}

const FAKE_UUID = "0190f0a8-0000-7000-8000-000000000000";

/** A string that fits a schema (format, pattern, enum), preferring real ids of the kind it names. */
function sampleString(s: Schema, ids: Map<string, string[]>): string {
  if (Array.isArray(s.enum)) return String(s.enum[0]);
  if (s.const !== undefined) return String(s.const);
  if (s.default !== undefined && typeof s.default === "string") return s.default;
  if (s.format === "date-time") return new Date().toISOString();
  if (s.format === "date") return "1990-04-01";
  if (s.format === "email") return "fuzz@example.com";
  if (s.format === "uri" || s.format === "url") return "https://example.com/fuzz";
  if (typeof s.pattern === "string") {
    const kind = /^\^([A-Z][A-Za-z]+):/.exec(s.pattern)?.[1];
    if (kind) return ids.get(kind)?.[0] ?? `${kind}:${FAKE_UUID}`;
    const re = new RegExp(s.pattern, "u");
    const candidates = ["USD", "US", "fuzz-key", "abc123", "$fuzz@example.com", "+14155550100", `04${"ab".repeat(64)}`, "x"];
    return candidates.find((c) => re.test(c)) ?? "x";
  }
  const min = typeof s.minLength === "number" ? s.minLength : 1;
  return "fuzz".padEnd(Math.max(min, 4), "z").slice(0, Math.max(min, Math.min(4, s.maxLength ?? 4)));
}

/** A plausible value for a schema: required properties (and a few optional ones), minimal arrays. */
function sample(doc: Json, schema: Schema | undefined, ids: Map<string, string[]>, depth = 0): Json {
  const s = deref(doc, schema);
  if (depth > 8) return null;
  if (s.const !== undefined) return s.const;
  if (Array.isArray(s.enum)) return s.enum[0];
  const variants = s.anyOf ?? s.oneOf;
  if (Array.isArray(variants)) return sample(doc, variants.find((v: Schema) => deref(doc, v).type !== "null") ?? variants[0], ids, depth + 1);
  if (Array.isArray(s.allOf)) return Object.assign({}, ...s.allOf.map((v: Schema) => sample(doc, v, ids, depth + 1)));
  const type = Array.isArray(s.type) ? s.type.find((t: string) => t !== "null") : s.type;
  switch (type) {
    case "object": {
      const out: Record<string, Json> = {};
      const props: Record<string, Schema> = s.properties ?? {};
      const required = new Set<string>(s.required ?? []);
      for (const [name, ps] of Object.entries(props)) {
        // Optional free-text fields too: they are where text reaches the database.
        const p = deref(doc, ps);
        const freeText = p.type === "string" && p.enum === undefined && p.pattern === undefined && p.format === undefined;
        if (required.has(name) || freeText) out[name] = sample(doc, p, ids, depth + 1);
      }
      if (Object.keys(props).length === 0 && s.additionalProperties && typeof s.additionalProperties === "object") {
        out.FULL_NAME = sample(doc, s.additionalProperties, ids, depth + 1);
      }
      return out;
    }
    case "array":
      return Array.from({ length: Math.max(1, s.minItems ?? 1) }, () => sample(doc, s.items, ids, depth + 1));
    case "integer":
    case "number":
      return s.default ?? (typeof s.minimum === "number" ? Math.max(s.minimum, Math.min(100, s.maximum ?? 100)) : 1);
    case "boolean":
      return s.default ?? false;
    case "string":
      return sampleString(s, ids);
    default:
      return s.default ?? null;
  }
}

/** Paths (JSON pointer segments) of the string leaves and of the objects taking free keys, in `value`. */
function leaves(value: Json, at: (string | number)[] = [], out: { strings: (string | number)[][]; records: (string | number)[][] } = { strings: [], records: [] }) {
  if (typeof value === "string") out.strings.push(at);
  else if (Array.isArray(value)) value.forEach((v, i) => leaves(v, [...at, i], out));
  else if (value && typeof value === "object") {
    out.records.push(at);
    for (const [k, v] of Object.entries(value)) leaves(v, [...at, k], out);
  }
  return out;
}

function setAt(value: Json, at: (string | number)[], replace: (old: Json) => Json): Json {
  const copy = structuredClone(value);
  if (at.length === 0) return replace(copy);
  let node = copy;
  for (const seg of at.slice(0, -1)) node = node[seg];
  const last = at[at.length - 1]!;
  node[last] = replace(node[last]);
  return copy;
}

const nested = (depth: number, open: string, close: string, inner = "1") => open.repeat(depth) + inner + close.repeat(depth);

/** Every case for one operation, the most telling first. */
function casesFor(doc: Json, o: Operation, ids: Map<string, string[]>): Case[] {
  const params: Json[] = o.op.parameters ?? [];
  const pathParams = params.filter((p) => p.in === "path");
  const queryParams = params.filter((p) => p.in === "query");
  const headerParams = params.filter((p) => p.in === "header");
  const bodySchema = o.op.requestBody?.content?.["application/json"]?.schema;
  const takesIdempotencyKey = headerParams.some((p) => p.name === "idempotency-key");

  // A DELETE of a real resource would remove the fixtures (our own tokens, the agent): fake ids there.
  const realIds = o.method === "DELETE" ? new Map<string, string[]>() : ids;
  const pathValues: Record<string, string> = Object.fromEntries(pathParams.map((p) => [p.name, encodeURIComponent(sampleString(deref(doc, p.schema), realIds))]));
  const fill = (values: Record<string, string>) => o.path.replace(/\{([^}]+)\}/g, (_m, name: string) => values[name] ?? "x");
  const baseQuery: Record<string, string> = {};
  for (const p of queryParams.filter((q) => q.required)) baseQuery[p.name] = sampleString(deref(doc, p.schema), ids);
  const qs = (q: Record<string, string>, raw: Record<string, string> = {}) =>
    [...Object.entries(q).map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`), ...Object.entries(raw).map(([k, v]) => `${encodeURIComponent(k)}=${v}`)].join("&");
  const baseBody = bodySchema ? sample(doc, bodySchema, ids) : undefined;
  const json = (v: Json) => JSON.stringify(v);
  let keySeq = 0;
  const idemHeaders = (): Record<string, string> => (takesIdempotencyKey ? { "idempotency-key": `fuzz-${o.method}-${o.path}-${++keySeq}` } : {});
  const withBody = (name: string, body: string | Buffer | undefined, headers: Record<string, string> = { "content-type": "application/json" }): Case => ({
    name,
    method: o.method,
    path: fill(pathValues),
    query: qs(baseQuery),
    headers: { ...idemHeaders(), ...headers },
    body,
  });

  const first: Case[] = [];
  const rest: Case[] = [];
  first.push(withBody("baseline", baseBody === undefined ? undefined : json(baseBody)));

  // Path ids.
  for (const p of pathParams) {
    first.push({ ...withBody(`path.${p.name} NUL`, baseBody === undefined ? undefined : json(baseBody)), path: fill({ ...pathValues, [p.name]: "%00" }) });
    for (const bad of BAD_PATH_IDS) rest.push({ ...withBody(`path.${p.name}=${bad.slice(0, 20)}`, baseBody === undefined ? undefined : json(baseBody)), path: fill({ ...pathValues, [p.name]: bad }) });
    const kindId = sampleString(deref(doc, p.schema), new Map());
    if (kindId.includes(":")) rest.push({ ...withBody(`path.${p.name} kind NUL`, undefined), path: fill({ ...pathValues, [p.name]: `${kindId.split(":")[0]}:${FAKE_UUID.slice(0, 8)}%00` }) });
  }

  // Query values.
  for (const p of queryParams) {
    const s = deref(doc, p.schema);
    const q = (name: string, raw: string) => ({ ...withBody(`query.${p.name} ${name}`, undefined), query: qs(Object.fromEntries(Object.entries(baseQuery).filter(([k]) => k !== p.name)), { [p.name]: raw }) });
    (p.name === "cursor" ? first : rest).push(q("NUL", "a%00b"));
    rest.push(q("lone surrogate (UTF-8 of U+D800)", "%ED%A0%80"), q("invalid UTF-8", "%FF%FE"), q("huge", "q".repeat(6000)), q("repeated", "a&" + encodeURIComponent(p.name) + "=b"));
    rest.push(q("junk", encodeURIComponent(pick(junkStrings).replace(/[\uD800-\uDFFF]/g, "?"))));
    if (s.type === "integer" || s.type === "number") for (const bad of BAD_INTEGERS) rest.push(q(`=${bad}`, encodeURIComponent(bad)));
    if (s.format === "date-time" || s.format === "date") for (const bad of BAD_DATES) rest.push(q(`=${bad}`, encodeURIComponent(bad)));
    if (p.name === "cursor") for (const [name, c] of Object.entries(CURSORS)) (name.includes("27") ? first : rest).push(q(name, c));
  }
  // An unknown query parameter with a NUL.
  rest.push({ ...withBody("query.unknown NUL", undefined), query: qs(baseQuery, { unknown: "%00" }) });

  // Headers the route declares.
  for (const p of headerParams) {
    if (p.name === "idempotency-key") {
      rest.push(withBody("header idempotency-key latin1", baseBody === undefined ? undefined : json(baseBody), { "content-type": "application/json", "idempotency-key": "cl\u00e9" }));
      rest.push(withBody("header idempotency-key huge", baseBody === undefined ? undefined : json(baseBody), { "content-type": "application/json", "idempotency-key": "k".repeat(3000) }));
    } else {
      rest.push(withBody(`header ${p.name} NUL inside`, baseBody === undefined ? undefined : json(baseBody), { "content-type": "application/json", [p.name]: b64url('{"publicKey":"\\u0000","signature":"\\ud800"}') }));
      rest.push(withBody(`header ${p.name} latin1`, baseBody === undefined ? undefined : json(baseBody), { "content-type": "application/json", [p.name]: "\u00ff\u00fe" }));
    }
  }

  // Basic credentials that decode to NUL, invalid UTF-8 or nothing.
  rest.push({ ...withBody("authorization Basic id NUL", undefined), noAuth: true, headers: { authorization: basicOf("id\u0000x:secret") } });
  rest.push({ ...withBody("authorization Basic invalid UTF-8", undefined), noAuth: true, headers: { authorization: basicOf(Buffer.from([0x69, 0xff, 0x3a, 0xfe])) } });
  rest.push({ ...withBody("authorization Basic lone surrogate", undefined), noAuth: true, headers: { authorization: basicOf(Buffer.from([0x69, 0xed, 0xa0, 0x80, 0x3a, 0x73])) } });
  rest.push({ ...withBody("authorization Basic huge", undefined), noAuth: true, headers: { authorization: basicOf(`${"u".repeat(3000)}:${"s".repeat(3000)}`) } });
  rest.push({ ...withBody("authorization Bearer junk", undefined), noAuth: true, headers: { authorization: "Bearer agt_\u00ff" } });

  if (bodySchema !== undefined && baseBody !== undefined) {
    const found = leaves(baseBody);
    const texts = shuffle(found.strings).slice(0, 8);
    for (const at of texts) {
      const where = at.join(".");
      first.push(withBody(`body.${where} NUL`, json(setAt(baseBody, at, (v) => `${v}\u0000`))));
      rest.push(withBody(`body.${where} lone high surrogate`, json(setAt(baseBody, at, () => LONE_HIGH))));
      rest.push(withBody(`body.${where} lone low surrogate`, json(setAt(baseBody, at, () => LONE_LOW))));
      rest.push(withBody(`body.${where} junk`, json(setAt(baseBody, at, () => pick(junkStrings)))));
    }
    // Any value in place of any member (type confusion, junk text), and whole junk bodies.
    const members = [...found.strings, ...found.records.filter((at) => at.length > 0)];
    for (let i = 0; i < 8 && members.length > 0; i++) {
      const at = pick(members);
      rest.push(withBody(`body.${at.join(".")} = random JSON`, json(setAt(baseBody, at, () => pick(junkJson)))));
    }
    for (let i = 0; i < 2; i++) rest.push(withBody("body random JSON", json(pick(junkJson))));
    if (texts[0]) rest.push(withBody(`body.${texts[0].join(".")} huge`, json(setAt(baseBody, texts[0], () => HUGE))));
    for (const at of found.records.slice(0, 3)) {
      rest.push(withBody(`body${at.length ? "." : ""}${at.join(".")} key NUL`, json(setAt(baseBody, at, (v) => ({ ...v, "k\u0000": "v" })))));
      rest.push(withBody(`body${at.length ? "." : ""}${at.join(".")} key lone surrogate`, json(setAt(baseBody, at, (v) => ({ ...v, "\uD800": "v" })))));
    }
    first.push(withBody("body deep array (20000)", nested(20_000, "[", "]")));
    rest.push(withBody("body deep object (64)", nested(64, '{"a":', "}")));
    rest.push(withBody("body deep in a field (40)", json({ ...baseBody, extra: JSON.parse(nested(40, "[", "]")) })));
    rest.push(withBody("body malformed JSON", '{"a": '));
    rest.push(withBody("body empty with JSON content type", ""));
    rest.push(withBody("body null", "null"));
    rest.push(withBody("body array", "[]"));
    rest.push(withBody("body string", '"x"'));
    rest.push(withBody("body escaped NUL in a key", '{"\\u0000":1}'));
    rest.push(withBody("body invalid UTF-8", Buffer.concat([Buffer.from('{"x":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')])));
    rest.push(withBody("body with BOM", `\ufeff${json(baseBody)}`));
    rest.push(withBody("body duplicate __proto__", '{"__proto__":{"x":1},"constructor":{"prototype":{"y":1}}}'));
    rest.push(withBody("body text/plain", json(baseBody), { "content-type": "text/plain" }));
    rest.push(withBody("body form", "a=b", { "content-type": "application/x-www-form-urlencoded" }));
    rest.push(withBody("body multipart", "--x\r\n\r\n--x--", { "content-type": "multipart/form-data; boundary=x" }));
    rest.push(withBody("body without content type", json(baseBody), {}));
    rest.push(withBody("body content type with odd charset", json(baseBody), { "content-type": "application/json; charset=utf-16" }));
    rest.push(withBody("body 2 MiB", json({ ...baseBody, pad: "p".repeat(2 * 1024 * 1024) })));
  } else if (o.method !== "GET" && o.method !== "HEAD") {
    // A route that takes no body refuses one that is not empty.
    first.push(withBody("unexpected body", json({ unexpected: true })));
    rest.push(withBody("unexpected malformed body", '{"a": '));
    rest.push(withBody("unexpected deep body", nested(20_000, "[", "]")));
    rest.push(withBody("unexpected text body", "hello", { "content-type": "text/plain" }));
    rest.push(withBody("empty JSON object", "{}"));
  }
  return [...first, ...shuffle(rest)].slice(0, Math.max(CASES_PER_OPERATION, first.length));
}

// ---------------------------------------------------------------------------------------------
// Sending.

/** One HTTP/1.1 exchange on a raw socket: for what fetch refuses to send (NUL in a header, bad request lines). */
function rawExchange(url: string, request: string | Buffer): Promise<Outcome & { closedWithoutAnswer: boolean }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.on("data", (c) => chunks.push(c));
    socket.on("error", (err) => (chunks.length ? undefined : resolve({ status: 0, body: undefined, text: String(err), closedWithoutAnswer: true })));
    socket.on("close", () => {
      const all = Buffer.concat(chunks).toString("latin1");
      if (!all) return resolve({ status: 0, body: undefined, text: "", closedWithoutAnswer: true });
      const [head, ...rest] = all.split("\r\n\r\n");
      let text = rest.join("\r\n\r\n");
      if (/transfer-encoding:\s*chunked/i.test(head!)) {
        let out = "";
        for (let i = 0; ; ) {
          const nl = text.indexOf("\r\n", i);
          const size = parseInt(text.slice(i, nl), 16);
          if (!size) break;
          out += text.slice(nl + 2, nl + 2 + size);
          i = nl + 2 + size + 2;
        }
        text = out;
      }
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head!)?.[1] ?? 0);
      let body: unknown;
      try {
        body = JSON.parse(Buffer.from(text, "latin1").toString("utf8"));
      } catch {
        body = undefined;
      }
      resolve({ status, body, text, closedWithoutAnswer: false });
    });
    socket.setTimeout(15_000, () => {
      socket.destroy();
      reject(new Error("raw exchange timed out"));
    });
    // Not end(): a half-closed client socket makes Node abort a request still being answered.
    socket.write(request);
  });
}

/** What is wrong with an answer, or undefined when it is fine. */
function problemWith(res: Outcome): string | undefined {
  if (res.status >= 500 && res.status !== 501) return `status ${res.status}`;
  if (res.status < 400) return undefined;
  const b = res.body as Json;
  if (!b || typeof b !== "object" || Array.isArray(b)) return `status ${res.status} without a JSON error body: ${res.text.slice(0, 120)}`;
  if (b.status !== res.status) return `body.status ${String(b.status)} for HTTP ${res.status}`;
  if (typeof b.code !== "string" || !/^[A-Z][A-Z0-9_]*$/.test(b.code)) return `code ${JSON.stringify(b.code)} is not UPPER_SNAKE`;
  if (typeof b.message !== "string" || b.message === "") return "no message";
  if (!b.details || typeof b.details !== "object" || Array.isArray(b.details)) return "details is not an object";
  if (b.code === "INVALID_INPUT" && b.details.errors !== undefined && !Array.isArray(b.details.errors)) return "details.errors is not a list";
  return undefined;
}

async function pool<T>(items: T[], size: number, run: (item: T) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: size }, async () => {
      while (next < items.length) await run(items[next++]!);
    }),
  );
}

describe.skipIf(skipReason())(`fuzzing every route of the served OpenAPI (${mode})`, () => {
  let system: TestSystem;
  let platform: Caller;
  let doc: Json;
  const tokens: { authorization: string; used: number }[] = [];
  /** Agents' Bearer tokens, for the /agents/me routes (none when no agent can be connected). */
  const agents: { authorization: string; used: number }[] = [];
  let bearerUnavailable = false;
  const ids = new Map<string, string[]>();

  const basic = (c: { clientId: string; clientSecret: string }) => `Basic ${Buffer.from(`${c.clientId}:${c.clientSecret}`).toString("base64")}`;

  /** Creating credentials one at a time (concurrent senders would each create one). */
  let creating: Promise<unknown> = Promise.resolve();
  function serially<T>(fn: () => Promise<T>): Promise<T> {
    const run = creating.then(fn, fn);
    creating = run.catch(() => undefined);
    return run;
  }

  const platformAuthorization = () => serially(nextPlatformAuthorization);
  async function nextPlatformAuthorization(): Promise<string> {
    let t = tokens[tokens.length - 1];
    if (!t || t.used >= REQUESTS_PER_TOKEN) {
      const created = await platform.call("POST", "/tokens", { name: `fuzz ${tokens.length}`, permissions: ["VIEW", "TRANSACT", "MANAGE"] });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      t = { authorization: basic(created.body), used: 0 };
      tokens.push(t);
    }
    t.used++;
    return t.authorization;
  }

  /** An agent's Bearer header (a new agent every REQUESTS_PER_TOKEN requests: limits are per agent), if agents can be connected. */
  const bearerAuthorization = () => serially(nextBearerAuthorization);
  async function nextBearerAuthorization(): Promise<string | undefined> {
    let a = agents[agents.length - 1];
    if (!a || a.used >= REQUESTS_PER_TOKEN) {
      const customerId = ids.get("Customer")?.[0];
      if (bearerUnavailable || !customerId || !doc.paths["/agents"]?.post) return undefined;
      const policy = { permissions: ["VIEW_TRANSACTIONS", "CREATE_QUOTES", "EXECUTE_QUOTES", "CREATE_TRANSFERS", "MANAGE_EXTERNAL_ACCOUNTS"] };
      const created = await platform.call("POST", "/agents", { name: `fuzz agent ${agents.length}`, customerId, policy });
      const code = created.body?.deviceCode?.code;
      const redeemed = created.status === 201 && code ? await system.raw("POST", `/2025-10-13/agents/device-codes/${encodeURIComponent(code)}/redeem`) : undefined;
      if (redeemed?.status !== 200) {
        if (process.env.FUZZ_REPORT) console.info("no agent:", created.status, JSON.stringify(created.body), redeemed?.status, JSON.stringify(redeemed?.body));
        bearerUnavailable = true;
        return undefined;
      }
      // Not harvested: platform routes given this agent's id could disconnect it mid-run.
      a = { authorization: `Bearer ${redeemed.body.accessToken}`, used: 0 };
      agents.push(a);
    }
    a.used++;
    return a.authorization;
  }

  async function send(c: Case, bearerRoute: boolean): Promise<Outcome> {
    const headers: Record<string, string> = { ...(c.headers ?? {}) };
    if (!c.noAuth) headers.authorization = (bearerRoute ? await bearerAuthorization() : undefined) ?? (await platformAuthorization());
    const url = `${system.api}${c.path}${c.query ? `?${c.query}` : ""}`;
    const res = await fetch(url, { method: c.method, headers, body: c.body });
    const text = await res.text();
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    return { status: res.status, body, text };
  }

  /** Remembers the ids a list or read answers, by kind (Customer:…), for the path params of later cases. */
  function harvest(body: Json) {
    const add = (id: unknown) => {
      if (typeof id !== "string") return;
      const kind = /^([A-Z][A-Za-z]+):[0-9a-fA-F-]+$/.exec(id)?.[1];
      if (!kind) return;
      const list = ids.get(kind) ?? [];
      if (!list.includes(id)) list.push(id);
      ids.set(kind, list);
    };
    for (const item of Array.isArray(body?.data) ? body.data : [body]) {
      if (item && typeof item === "object") for (const v of Object.values(item)) add(v);
    }
  }

  beforeAll(async () => {
    system = await startTestSystem();
    platform = await system.createPlatform();
    const res = await fetch(`${system.api}/openapi.json`);
    expect(res.status).toBe(200);
    doc = await res.json();

    // Real resources, so that path ids name something and the mutations reach deeper.
    const customer = await platform.call("POST", "/customers", individual());
    if (customer.status === 201) harvest(customer.body);
    await bearerAuthorization();
    // Another agent, whose id the platform-side /agents/{agentId} routes get.
    const customerId = ids.get("Customer")?.[0];
    if (customerId && doc.paths["/agents"]?.post) harvest((await platform.call("POST", "/agents", { name: "fuzz target", customerId })).body?.agent);
    for (const [path, ops] of Object.entries<Json>(doc.paths)) {
      if (!ops.get || path.includes("{")) continue;
      const required = (ops.get.parameters ?? []).filter((p: Json) => p.in === "query" && p.required);
      if (required.length) continue;
      const r = await send({ name: "harvest", method: "GET", path }, path.startsWith("/agents/me"));
      if (r.status === 200) harvest(r.body);
    }
  }, 120_000);
  afterAll(async () => {
    await system?.stop();
  });

  it("answers no 500 and nothing outside the error shape, on every route, whatever the input", async () => {
    const operations: Operation[] = [];
    for (const [path, ops] of Object.entries<Json>(doc.paths)) {
      for (const [method, op] of Object.entries<Json>(ops)) {
        if (["get", "post", "put", "patch", "delete"].includes(method)) operations.push({ method: method.toUpperCase(), path, op });
      }
    }
    expect(operations.length).toBeGreaterThan(50);

    const work: { o: Operation; c: Case }[] = [];
    for (const o of operations) for (const c of casesFor(doc, o, ids)) work.push({ o, c });
    const failures: string[] = [];
    const statuses = new Map<string, number>();
    let sent = 0;
    await pool(work, CONCURRENCY, async ({ o, c }) => {
      const bearerRoute = o.path.startsWith("/agents/me");
      let res: Outcome;
      try {
        res = await send(c, bearerRoute);
      } catch (err) {
        failures.push(`${o.method} ${o.path} [${c.name}]: request failed: ${String(err)}`);
        return;
      }
      sent++;
      const byStatus = `${res.status} ${(res.body as Json)?.code ?? ""}`.trim();
      statuses.set(byStatus, (statuses.get(byStatus) ?? 0) + 1);
      const problem = problemWith(res);
      if (problem) failures.push(`${o.method} ${o.path} [${c.name}]: ${problem} ${res.text.slice(0, 160)}`);
    });
    if (process.env.FUZZ_REPORT) {
      console.info(`fuzz (${mode}): ${sent} requests on ${operations.length} operations; agents: ${agents.length}, tokens: ${tokens.length}; ids: ${[...ids.keys()].join(",")}`);
      console.info([...statuses].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${n}\t${k}`).join("\n"));
    }
    expect(sent).toBeGreaterThan(operations.length * 10);
    expect(failures, `${failures.length} of ${work.length} requests`).toEqual([]);
  }, 300_000);

  it("leaves the real token working through a flood of wrong secrets for its clientId (issue 14, defect 3)", async () => {
    const created = await platform.call("POST", "/tokens", { name: "flood victim", permissions: ["VIEW"] });
    expect(created.status).toBe(201);
    const victim = system.as(created.body.clientId, created.body.clientSecret);
    const stranger = system.as(created.body.clientId, "wrong-secret");
    const statuses = new Map<number, number>();
    // More wrong secrets than the request limit allows requests (1000 a minute by default).
    await pool(Array.from({ length: 1_050 }, (_, i) => i), 8, async () => {
      const res = await stranger.call("GET", "/config");
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    });
    expect([...statuses.keys()].sort()).toEqual([401, 429]);
    for (let i = 0; i < 5; i++) expect((await victim.call("GET", "/config")).status).toBe(200);
    const refused = await stranger.call("GET", "/config");
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
  }, 120_000);

  it("answers framework-level failures (bad URL, long params, header overflow, bad header bytes) in the error shape", async () => {
    const host = new URL(system.url).host;
    const auth = await platformAuthorization();
    const get = (target: string, extra = "") => `GET ${target} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: ${auth}\r\n${extra}Connection: close\r\n\r\n`;
    const cases: [string, string | Buffer][] = [
      ["bad percent-encoding in the path", get("/2025-10-13/tokens/%zz")],
      ["a lone % in the path", get("/2025-10-13/tokens/%")],
      ["a path param beyond the router's limit", get(`/2025-10-13/tokens/${"t".repeat(2000)}`)],
      ["a NUL byte in a header value", Buffer.from(get("/2025-10-13/config", "X-Fuzz: a\u0000b\r\n"), "latin1")],
      ["a header block beyond the server's limit", get("/2025-10-13/config", `X-Fuzz: ${"h".repeat(40_000)}\r\n`)],
      ["a NUL in the request target", Buffer.from(get("/2025-10-13/config?x=\u0000"), "latin1")],
      ["a non-ASCII byte in the request target", Buffer.from(get("/2025-10-13/tokens/\u00ff"), "latin1")],
      ["an unknown HTTP method", `BREW /2025-10-13/config HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`],
      ["a bad Content-Length", `POST /2025-10-13/tokens HTTP/1.1\r\nHost: ${host}\r\nAuthorization: ${auth}\r\nContent-Type: application/json\r\nContent-Length: abc\r\nConnection: close\r\n\r\n{}`],
      ["an absolute-form target", get(`http://${host}/2025-10-13/config`)],
      ["a query string of 12 KiB", get(`/2025-10-13/tokens?name=${"n".repeat(12_000)}`)],
    ];
    const failures: string[] = [];
    for (const [name, request] of cases) {
      const res = await rawExchange(system.url, request);
      if (res.closedWithoutAnswer) failures.push(`${name}: the connection closed without an answer`);
      else {
        const problem = problemWith(res);
        if (problem) failures.push(`${name}: ${problem}`);
      }
    }
    expect(failures).toEqual([]);
  }, 60_000);
});
