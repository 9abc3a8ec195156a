import { sample } from "openapi-sampler";

/**
 * What the reference page reads besides the schemas: the groups in the order a platform
 * integrates, and a request and response example on every operation. Pure functions over the
 * OpenAPI document @fastify/swagger generates (openapi.ts applies them).
 */

/** The reference's groups, in the order a platform integrates; every operation carries one of them. */
export const REFERENCE_TAGS: { name: string; description: string }[] = [
  { name: "Customers and KYC", description: "Onboard the people and businesses you serve: customers, their verification (KYC/KYB) and beneficial owners." },
  { name: "Accounts", description: "Where money sits: internal accounts (balances held for a customer or the platform) and external bank or wallet accounts money goes to." },
  { name: "Transfers", description: "Move money between a customer's internal and external accounts, and follow every transaction." },
  { name: "Quotes and FX", description: "Exchange rates, quotes that lock a rate and fees, their execution, and receiver look-ups." },
  { name: "UMA", description: "Universal Money Addresses: look up a receiver, invite one, and approve or reject incoming UMA payments." },
  {
    name: "Webhooks and events",
    description:
      "Webhooks are signed with Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature). The events API (an extension of the contract) lists every event with its delivery attempts and redelivers it.",
  },
  { name: "Agents", description: "The platform's agents: policies, device codes and approvals of agent actions (HTTP Basic)." },
  { name: "Agent operations", description: "What an agent does for its customer, under its policy (HTTP Bearer: the agent's access token)." },
  { name: "Embedded wallets", description: "Embedded-wallet authentication (credentials, challenges, sessions) and wallet export." },
  { name: "Cards", description: "Debit cards issued to approved customers against their internal accounts: issue, freeze, close, and manage the accounts that fund them (sandbox issuer only)." },
  { name: "Sandbox", description: "Sandbox-only helpers: fund accounts, advance the clock, simulate payments and test webhooks (production platforms get 403)." },
  { name: "Tokens and config", description: "API tokens for HTTP Basic authentication, the platform's configuration, and this contract." },
];

/** A route's own tag → its reference group (tags already named as a group map to themselves). */
const GROUP_OF_TAG: Record<string, string> = {
  Customers: "Customers and KYC",
  "Internal accounts": "Accounts",
  "External accounts": "Accounts",
  Transfers: "Transfers",
  Transactions: "Transfers",
  Quotes: "Quotes and FX",
  // Quote authorization and trusted beneficiaries (docs/sca.md).
  "Strong Customer Authentication": "Quotes and FX",
  Crypto: "Quotes and FX",
  Invitations: "UMA",
  "Embedded wallet authentication": "Embedded wallets",
  Tokens: "Tokens and config",
  Platform: "Tokens and config",
  Meta: "Tokens and config",
  ...Object.fromEntries(REFERENCE_TAGS.map((t) => [t.name, t.name])),
};

/** Routes whose subject belongs to another group than their route file's tag. */
const GROUP_OF_PATH: [RegExp, string][] = [
  [/^\/receiver\/uma\//, "UMA"],
  [/^\/transactions\/[^/]+\/(approve|reject)$/, "UMA"],
  [/^\/config\/webhook-(secret|public-key)/, "Webhooks and events"],
];

/** The reference group of a route (path relative to the API version, with {params}); unknown tags are kept, and a test flags them. */
export function referenceTags(path: string, tags: readonly string[] | undefined): string[] | undefined {
  const byPath = GROUP_OF_PATH.find(([re]) => re.test(path))?.[1];
  if (byPath) return [byPath];
  if (!tags) return tags;
  return [...new Set(tags.map((t) => GROUP_OF_TAG[t] ?? t))];
}

// ---------------------------------------------------------------------------------------------
// Examples

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Schema = Record<string, any>;
type Doc = Record<string, any>;

const EXAMPLE_UUID = "019a8f3e-5b0c-7a41-8d9f-2e3c4b5a6978";
const EXAMPLE_TIME = "2025-10-13T09:30:00.000Z";

/** Kinds of ids whose field name does not say them. */
const KIND_OF_FIELD: Record<string, string> = { accountId: "InternalAccount", sourceAccountId: "InternalAccount", destinationAccountId: "ExternalAccount" };

/** Examples of fields known by name. */
const NAMED_EXAMPLES: Record<string, string> = {
  accountNumber: "000123456789",
  routingNumber: "021000021",
  bankName: "Test Bank",
  iban: "DE89370400440532013000",
  swiftCode: "DEUTDEFF",
  clabeNumber: "002180000000000018",
  address: "spark1pgssyuuuhnrrdjswal5c3s3rafw9w3y5dd4cjy3duxlf7hjzkp0rqx6dj6mrhu",
  assetType: "BTC",
  instructionsNotes: "Pay exactly this amount with the reference below.",
  description: "Rent for October",
  message: "This is a test webhook from Corridor.",
  clientId: "cli_4f7d2c9e8b1a",
  clientSecret: "sec_9c1e5b7a3d2f4e6a8b0c",
  secret: "whsec_QjE3M2Y2YTktNDFhYy00ZTE1LWEzYjAtNzQxZGZkMmI2N2Jk",
  accessToken: "agt_3n8Qm2XvT5kPz7wLr4sYh9",
  taxId: "12-3456789",
  umaDomain: "platform.example.com",
  passkeyRelyingPartyId: "platform.example.com",
  passkeyOrigins: "https://platform.example.com",
  line1: "1 Market Street",
  line2: "Suite 300",
  city: "San Francisco",
  state: "CA",
  postalCode: "94105",
  legalName: "Acme Trading LLC",
  doingBusinessAs: "Acme",
  registrationNumber: "5551234",
  entityType: "LLC",
  website: "https://acme.example",
  sourceType: "ACCOUNT",
  destinationType: "ACCOUNT",
  paymentRail: "ACH",
  symbol: "$",
  reason: "Requested by the customer",
  failureReason: "INSUFFICIENT_BALANCE",
};

/** Examples of number fields known by name (used only when they fit the field's bounds). */
const NAMED_NUMBERS: [RegExp, number][] = [
  [/^decimals$/, 2],
  [/^(fees?|fixedFee|serviceApiFixedFee)$/i, 25],
  [/amount$/i, 2500],
  [/(exchangeRate|multiplier)$/i, 0.92],
  [/limit$/i, 50000],
  [/^seconds$/, 3600],
];

/** A currency as the API answers it, for objects shaped like one. */
const USD = { code: "USD", name: "US Dollar", symbol: "$", decimals: 2 };

/** An example for a string field that has none of its own, from its format, pattern, description or name. */
function stringExample(schema: Schema, field: string | undefined): string | undefined {
  switch (schema.format) {
    case "date-time":
      return EXAMPLE_TIME;
    case "date":
      return "2025-10-13";
    case "uri":
    case "url":
      return "https://platform.example.com/webhooks";
    case "email":
      return "ada@example.com";
  }
  const kind =
    /^\^([A-Z][A-Za-z]+):/.exec(String(schema.pattern ?? ""))?.[1] ??
    /^([A-Z][A-Za-z]+):<uuid/.exec(String(schema.description ?? ""))?.[1] ??
    (field && Object.hasOwn(KIND_OF_FIELD, field) ? KIND_OF_FIELD[field] : undefined) ??
    (field && /^([a-z][A-Za-z]*)Id$/.exec(field) && !/platform|client/i.test(field) ? field[0]!.toUpperCase() + field.slice(1, -2) : undefined);
  const named = field !== undefined && Object.hasOwn(NAMED_EXAMPLES, field) ? NAMED_EXAMPLES[field] : undefined;
  if (named !== undefined) return named;
  if (kind) return `${kind}:${EXAMPLE_UUID}`;
  if (!field) return undefined;
  if (/currenc(y|ies)(Code)?$/i.test(field) || (field === "code" && schema.maxLength === 3)) return "USD";
  if (/uma(Address)?$/i.test(field)) return "$ada@corridor.example";
  if (/email/i.test(field)) return "ada@example.com";
  if (/phone/i.test(field)) return "+14155550123";
  if (/country|countries|nationality|region/i.test(field)) return "US";
  if (/^(full)?name$/i.test(field)) return "Ada Lovelace";
  if (field === "platformCustomerId") return "user-1234";
  if (field === "reference") return "invoice-2025-0042";
  if (/endpoint|url$/i.test(field)) return "https://platform.example.com/webhooks";
  return undefined;
}

/**
 * A copy of `node` in which every string schema without an example of its own gets one (see
 * stringExample), so the sampler's output reads like real data. The published document is not
 * changed: only the sampler sees the copy.
 */
function enrich(node: unknown, field?: string): unknown {
  if (Array.isArray(node)) return node.map((n) => enrich(n, field));
  if (node === null || typeof node !== "object") return node;
  const s = node as Schema;
  const out: Schema = {};
  for (const [k, v] of Object.entries(s)) {
    if (k === "properties" && v && typeof v === "object") out[k] = Object.fromEntries(Object.entries(v as Schema).map(([name, p]) => [name, enrich(p, name)]));
    else if (k === "examples" || k === "example" || k === "enum" || k === "const" || k === "default") out[k] = v;
    else out[k] = enrich(v, k === "items" || k === "anyOf" || k === "oneOf" || k === "allOf" ? field : undefined);
  }
  const isType = (t: string) => s.type === t || (Array.isArray(s.type) && s.type.includes(t));
  const own = s.examples !== undefined || s.example !== undefined || s.enum !== undefined || s.const !== undefined || s.default !== undefined;
  if (!own && isType("string")) {
    const ex = stringExample(s, field);
    if (ex !== undefined && fits(s, ex)) out.examples = [ex];
  }
  if (!own && (isType("integer") || isType("number")) && field) {
    const ex = NAMED_NUMBERS.find(([re]) => re.test(field))?.[1];
    if (ex !== undefined && (isType("number") || Number.isInteger(ex)) && fitsNumber(s, ex)) out.examples = [ex];
  }
  // An object shaped like a currency ({code, name, symbol, decimals}) reads as US dollars.
  if (!own && isType("object") && s.properties && ["code", "decimals"].every((k) => k in s.properties) && Object.keys(s.properties).every((k) => Object.hasOwn(USD, k))) {
    out.examples = [Object.fromEntries(Object.keys(s.properties).map((k) => [k, USD[k as keyof typeof USD]]))];
  }
  return out;
}

function fitsNumber(schema: Schema, value: number): boolean {
  if (typeof schema.minimum === "number" && value < schema.minimum) return false;
  if (typeof schema.maximum === "number" && value > schema.maximum) return false;
  if (typeof schema.exclusiveMinimum === "number" && value <= schema.exclusiveMinimum) return false;
  if (typeof schema.exclusiveMaximum === "number" && value >= schema.exclusiveMaximum) return false;
  return true;
}

/** A candidate example is used only when it fits the field's own constraints. */
function fits(schema: Schema, value: string): boolean {
  if (typeof schema.pattern === "string" && !new RegExp(schema.pattern, "u").test(value)) return false;
  if (typeof schema.maxLength === "number" && value.length > schema.maxLength) return false;
  if (typeof schema.minLength === "number" && value.length < schema.minLength) return false;
  return true;
}

/** `request`: read-only fields are left out. Optional fields are shown: some are needed in combination (an accountId for sourceType ACCOUNT). */
function sampleOf(schema: Schema | undefined, enrichedDoc: Doc, request = false): Json | undefined {
  if (!schema) return undefined;
  return sample(enrich(schema) as never, { skipReadOnly: request, quiet: true, enablePatterns: true, maxSampleDepth: 20 }, enrichedDoc) as Json;
}

/** Codes a status answers when the schema names none of its own (the gateway's generic ones). */
const GENERIC_CODES: Record<string, [number, string, string]> = {
  "400": [400, "INVALID_INPUT", "body.amount: must be >= 1"],
  "401": [401, "UNAUTHORIZED", "Missing or invalid credentials"],
  "403": [403, "FORBIDDEN", "This token lacks the permission this operation needs"],
  "404": [404, "NOT_FOUND", "Not found"],
  "409": [409, "CONFLICT", "The resource is not in a state that allows this"],
  "422": [422, "IDEMPOTENCY_KEY_REUSED", "This Idempotency-Key was used with a different request (another route or body)"],
  "429": [429, "RATE_LIMITED", "Too many requests; retry after the time in Retry-After"],
  "500": [500, "INTERNAL_ERROR", "An internal error occurred; it has been logged"],
  "503": [503, "SERVICE_UNAVAILABLE", "A service this request needs is unavailable; retry later"],
};

/** The example of an error answer: the code the schema names (an enum of codes) or the status's generic one. */
function errorExample(status: string, sampled: { [k: string]: Json }): Json {
  const ownCode = typeof sampled.code === "string" && /^[A-Z][A-Z0-9_]+$/.test(sampled.code) ? sampled.code : undefined;
  const key = /^\d{3}$/.test(status) ? status : status.startsWith("5") ? "503" : "400";
  const [code, message] = ownCode ? [ownCode, ownCode.charAt(0) + ownCode.slice(1).toLowerCase().replace(/_/g, " ")] : [GENERIC_CODES[key]?.[1] ?? "INVALID_INPUT", GENERIC_CODES[key]?.[2] ?? "Bad request"];
  const details: Json = code === "INVALID_INPUT" ? { errors: [{ field: "body.amount", reason: "must be >= 1" }] } : {};
  return { status: Number(key), code, message, details };
}

const isErrorBody = (v: Json | undefined): v is { [k: string]: Json } => !!v && typeof v === "object" && !Array.isArray(v) && "status" in v && "code" in v && "message" in v;

function mediaExample(media: Schema, status: string | undefined, enrichedDoc: Doc): void {
  if (media.example !== undefined || media.examples !== undefined || !media.schema) return;
  const value = sampleOf(media.schema, enrichedDoc, status === undefined);
  if (value === undefined) return;
  // The sampler knows an error's shape, not which answer it is: the status and a code that fits it.
  media.example = status !== undefined && !status.startsWith("2") && isErrorBody(value) ? errorExample(status, value) : value;
}

/** A curl command for the operation, with its example body, for the reference's request samples. */
function curlSample(method: string, path: string, op: Schema, body: Json | undefined, enrichedDoc: Doc): string {
  const params = (op.parameters ?? []) as Schema[];
  const filled = path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const p = params.find((x) => x.in === "path" && x.name === name);
    const v = p ? sampleOf(p.schema, enrichedDoc) : undefined;
    return encodeURIComponent(typeof v === "string" && v !== "string" ? v : `${name}`);
  });
  const security = (op.security ?? []) as Schema[];
  const auth = security.some((s) => "bearerAuth" in s) ? ` \\\n  -H "Authorization: Bearer $AGENT_TOKEN"` : security.some((s) => "basicAuth" in s) ? ` -u "$CLIENT_ID:$CLIENT_SECRET"` : "";
  const lines = [`curl -s${auth} -X ${method.toUpperCase()} "$CORRIDOR${filled}"`];
  if (params.some((p) => p.in === "header" && String(p.name).toLowerCase() === "idempotency-key")) lines.push(`  -H "Idempotency-Key: $(uuidgen)"`);
  if (body !== undefined) {
    lines.push(`  -H 'content-type: application/json'`);
    lines.push(`  -d '${JSON.stringify(body, null, 2).replace(/'/g, "'\\''")}'`);
  }
  return `# CORRIDOR=http://127.0.0.1:8080/2025-10-13\n${lines.join(" \\\n")}`;
}

const METHODS = ["get", "put", "post", "patch", "delete", "head", "options"];

/**
 * Gives every operation a request and response example where its schemas have none: a JSON
 * example on each request body and on each answer with content (sampled from its schema, the
 * schema's own `examples` first), and a curl request sample (`x-codeSamples`). Examples a route
 * wrote itself are kept.
 */
export function withExamples<T extends Doc>(doc: T): T {
  const enrichedDoc = enrich(doc) as Doc;
  for (const [path, item] of Object.entries((doc.paths ?? {}) as Record<string, Schema>)) {
    for (const method of METHODS) {
      const op = item[method] as Schema | undefined;
      if (!op) continue;
      let body: Json | undefined;
      for (const media of Object.values((op.requestBody?.content ?? {}) as Record<string, Schema>)) {
        mediaExample(media, undefined, enrichedDoc);
        body ??= media.example as Json | undefined;
      }
      for (const [status, response] of Object.entries((op.responses ?? {}) as Record<string, Schema>)) {
        for (const media of Object.values((response.content ?? {}) as Record<string, Schema>)) mediaExample(media, status, enrichedDoc);
      }
      op["x-codeSamples"] ??= [{ lang: "Shell", label: "curl", source: curlSample(method, path, op, body, enrichedDoc) }];
    }
  }
  return doc;
}

/**
 * Descriptions are CommonMark, where `<uuidv7>` is an HTML tag that a renderer drops ("Token:<uuidv7>"
 * read "Token:"). Placeholders in angle brackets are escaped (`\\<uuidv7\\>`), which every
 * CommonMark reader shows as written.
 */
export function escapePlaceholders<T>(node: T): T {
  if (Array.isArray(node)) {
    for (const n of node) escapePlaceholders(n);
  } else if (node !== null && typeof node === "object") {
    const o = node as Record<string, unknown>;
    for (const [k, v] of Object.entries(o)) {
      if (k === "description" && typeof v === "string") o[k] = v.replace(/(?<!\\)<([A-Za-z][\w.-]*)(?<!\\)>/g, "\\<$1\\>");
      else if (k !== "example" && k !== "examples") escapePlaceholders(v);
    }
  }
  return node;
}
