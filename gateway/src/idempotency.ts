import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from "node:crypto";
import { ConnectError } from "@connectrpc/connect";
import { AppError, IDEMPOTENCY_KEY_TTL_MS, canonicalJson, type Logger } from "@corridor/kit";
import { PublicErrorSchema } from "@corridor/proto/corridor/common/v1/error_pb.js";
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from "fastify";
import type { Redis } from "ioredis";
import { Type } from "typebox";
import type { Principal } from "./auth.js";
import { API_VERSION } from "./errors.js";
import { IdempotencyKeyHeader } from "./schemas/common.js";

/**
 * Decisions §3 scopes an Idempotency-Key to (platform, key) across the whole API, but each service
 * keeps its own `idempotency_keys` table (so that its effect and its stored response commit
 * together). The services alone would let `k1` on POST /transfer-in (ledger) be used again on
 * POST /quotes (quotes-fx) with another body. The gateway therefore claims (platformId, key) for
 * the request's fingerprint before it dispatches:
 *
 *   - first use: the claim is recorded for 24 h (the life of a key);
 *   - same fingerprint: the request passes through, and the service replays its stored answer or
 *     answers 409 IDEMPOTENCY_KEY_IN_USE;
 *   - another fingerprint: 422 IDEMPOTENCY_KEY_REUSED, and no service is called.
 *
 * A claim counts the requests under it that are still running and whether one of them may have
 * had its effect. It is released only when a request failed without effect (the services then
 * release their own keys too), no other request under it is running and none committed, so a
 * corrected retry with the same key works and a concurrent duplicate's success is never forgotten.
 *
 * Routes whose service stores no answer (customers, owners, documents, tokens, agents, config, ...)
 * are recorded here instead: the same registry entry then also holds the request running under the
 * key (with a lease) and, once it answered, its sealed answer, which is replayed byte for byte
 * (docs/idempotency.md; the hooks at the end of this file say which route is which).
 */

export interface KeyScope {
  platformId: string;
  key: string;
}

export type ClaimResult =
  /** First use of the key: this request opened the claim. */
  | "claimed"
  /** The key is claimed for the same fingerprint: pass through, the service decides. */
  | "joined"
  /** The key is claimed for another request: 422 IDEMPOTENCY_KEY_REUSED. */
  | "conflict";

export type Settlement =
  /** The request succeeded, or its effect may have happened: the claim stays for its lifetime. */
  | "committed"
  /** The service answered with its own idempotency check (409 IN_USE, 422 REUSED): says nothing about the effect. */
  | "undecided"
  /** The request failed without effect: release the claim unless another request under it runs or committed. */
  | "failed";

/**
 * A claim of a route whose answer the gateway records (no service stores one): one request runs
 * under it at a time, and once it answered, its answer is replayed.
 */
export type RecordedClaim =
  /** This request runs (first use, or the previous holder's lease ran out without an answer). */
  | { kind: "claimed" }
  /** Another request with the same fingerprint runs: 409 IDEMPOTENCY_KEY_IN_USE. */
  | { kind: "in_use" }
  /** The key is claimed for another request: 422 IDEMPOTENCY_KEY_REUSED. */
  | { kind: "conflict" }
  /** The first request answered: its sealed answer (sealAnswer) is replayed. */
  | { kind: "replay"; answer: string };

/** Where claims live: Redis when the gateway has one (shared by replicas), else this process. */
export interface IdempotencyRegistry {
  claim(scope: KeyScope, fingerprint: string): Promise<ClaimResult>;
  /** Ends one request under the claim; answers true when that released the claim. */
  settle(scope: KeyScope, fingerprint: string, outcome: Settlement): Promise<boolean>;
  /** Claims a gateway-recorded key for `owner` (a request id) for `leaseMs` while it runs. */
  claimRecorded(scope: KeyScope, fingerprint: string, owner: string, leaseMs: number): Promise<RecordedClaim>;
  /** Stores the answer of a claimed recorded key (the first answer stays if one is there). */
  record(scope: KeyScope, fingerprint: string, answer: string): Promise<void>;
  /** Forgets a recorded key that `owner` holds and that has no answer (its request had no effect). */
  release(scope: KeyScope, fingerprint: string, owner: string): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * SHA-256 of method, the route's path with its params filled in, and the canonical JSON of the body
 * as the client sent it (before schema defaults; key order and whitespace do not count).
 */
export function requestFingerprint(method: string, path: string, body: unknown): string {
  return createHash("sha256").update(`${method.toUpperCase()}\n${path}\n${canonicalJson(body)}`).digest("hex");
}

/** `/2025-10-13/quotes/:quoteId/execute` with `{quoteId}` -> the concrete path (params URL-encoded). */
export function filledPath(routeUrl: string, params: unknown): string {
  const values = (params ?? {}) as Record<string, unknown>;
  return routeUrl.replace(/:([A-Za-z0-9_]+)/g, (_m, name: string) => encodeURIComponent(String(values[name] ?? "")));
}

// ---------------------------------------------------------------------------------------------

interface MemoryClaim {
  fingerprint: string;
  inFlight: number;
  committed: boolean;
  expiresAt: number;
  /** Gateway-recorded keys: the request running under it, until when, and the answer once there. */
  owner?: string;
  leaseUntil?: number;
  answer?: string;
}

/** One process only (embedded mode): replicas must share Redis, or each would see its own claims. */
export class MemoryIdempotencyRegistry implements IdempotencyRegistry {
  // Every claim lives the same ttlMs and an expired one is re-inserted at the end, so the Map's
  // insertion order is expiry order and sweeping stops at the first live claim.
  private readonly claims = new Map<string, MemoryClaim>();

  constructor(
    private readonly ttlMs = IDEMPOTENCY_KEY_TTL_MS,
    private readonly now: () => number = Date.now,
    private readonly maxEntries = 1_000_000,
  ) {}

  async claim(scope: KeyScope, fingerprint: string): Promise<ClaimResult> {
    this.sweep();
    const id = idOf(scope);
    const held = this.claims.get(id);
    if (held) {
      if (held.fingerprint !== fingerprint) return "conflict";
      held.inFlight++;
      return "joined";
    }
    // Bounded memory: past the cap the oldest claims go first (their keys lose only the
    // cross-route check; each service still guards its own routes).
    if (this.claims.size >= this.maxEntries) {
      const oldest = this.claims.keys().next().value;
      if (oldest !== undefined) this.claims.delete(oldest);
    }
    this.claims.set(id, { fingerprint, inFlight: 1, committed: false, expiresAt: this.now() + this.ttlMs });
    return "claimed";
  }

  async claimRecorded(scope: KeyScope, fingerprint: string, owner: string, leaseMs: number): Promise<RecordedClaim> {
    this.sweep();
    const id = idOf(scope);
    const held = this.claims.get(id);
    const now = this.now();
    if (held) {
      if (held.fingerprint !== fingerprint) return { kind: "conflict" };
      if (held.answer !== undefined) return { kind: "replay", answer: held.answer };
      if ((held.leaseUntil ?? 0) > now) return { kind: "in_use" };
      held.owner = owner;
      held.leaseUntil = now + leaseMs;
      return { kind: "claimed" };
    }
    if (this.claims.size >= this.maxEntries) {
      const oldest = this.claims.keys().next().value;
      if (oldest !== undefined) this.claims.delete(oldest);
    }
    this.claims.set(id, { fingerprint, inFlight: 0, committed: false, expiresAt: now + this.ttlMs, owner, leaseUntil: now + leaseMs });
    return { kind: "claimed" };
  }

  async record(scope: KeyScope, fingerprint: string, answer: string): Promise<void> {
    const held = this.claims.get(idOf(scope));
    if (!held || held.fingerprint !== fingerprint || held.expiresAt <= this.now() || held.answer !== undefined) return;
    held.answer = answer;
  }

  async release(scope: KeyScope, fingerprint: string, owner: string): Promise<boolean> {
    const id = idOf(scope);
    const held = this.claims.get(id);
    if (!held || held.fingerprint !== fingerprint || held.owner !== owner || held.answer !== undefined) return false;
    this.claims.delete(id);
    return true;
  }

  async settle(scope: KeyScope, fingerprint: string, outcome: Settlement): Promise<boolean> {
    const id = idOf(scope);
    const held = this.claims.get(id);
    if (!held || held.fingerprint !== fingerprint || held.expiresAt <= this.now()) return false;
    held.inFlight = Math.max(0, held.inFlight - 1);
    if (outcome === "committed") held.committed = true;
    if (outcome === "failed" && held.inFlight === 0 && !held.committed) {
      this.claims.delete(id);
      return true;
    }
    return false;
  }

  async close(): Promise<void> {
    this.claims.clear();
  }

  private sweep(): void {
    const now = this.now();
    for (const [id, c] of this.claims) {
      if (c.expiresAt > now) break;
      this.claims.delete(id);
    }
  }
}

// Each script runs atomically in Redis, so two replicas cannot both open a claim, and a release
// never races a request joining the claim.
const CLAIM_SCRIPT = `
local fp = redis.call('HGET', KEYS[1], 'fp')
if not fp then
  redis.call('HSET', KEYS[1], 'fp', ARGV[1], 'inflight', 1, 'committed', 0)
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 'claimed'
end
if fp ~= ARGV[1] then return 'conflict' end
redis.call('HINCRBY', KEYS[1], 'inflight', 1)
return 'joined'
`;

const SETTLE_SCRIPT = `
if redis.call('HGET', KEYS[1], 'fp') ~= ARGV[1] then return 0 end
local inflight = redis.call('HINCRBY', KEYS[1], 'inflight', -1)
if ARGV[2] == 'committed' then redis.call('HSET', KEYS[1], 'committed', 1) end
if ARGV[2] == 'failed' and inflight <= 0 and redis.call('HGET', KEYS[1], 'committed') == '0' then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
`;

// Gateway-recorded keys. The lease is judged by Redis's own clock (TIME), so replicas whose clocks
// differ agree on it; the answer, once stored, is never replaced.
const CLAIM_RECORDED_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local until_ms = now + tonumber(ARGV[4])
local fp = redis.call('HGET', KEYS[1], 'fp')
if not fp then
  redis.call('HSET', KEYS[1], 'fp', ARGV[1], 'owner', ARGV[3], 'lease', until_ms)
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {'claimed'}
end
if fp ~= ARGV[1] then return {'conflict'} end
local answer = redis.call('HGET', KEYS[1], 'answer')
if answer then return {'replay', answer} end
if tonumber(redis.call('HGET', KEYS[1], 'lease') or '0') > now then return {'in_use'} end
redis.call('HSET', KEYS[1], 'owner', ARGV[3], 'lease', until_ms)
return {'claimed'}
`;

const RECORD_SCRIPT = `
if redis.call('HGET', KEYS[1], 'fp') ~= ARGV[1] then return 0 end
if redis.call('HEXISTS', KEYS[1], 'answer') == 1 then return 0 end
redis.call('HSET', KEYS[1], 'answer', ARGV[2])
return 1
`;

const RELEASE_SCRIPT = `
if redis.call('HGET', KEYS[1], 'fp') ~= ARGV[1] then return 0 end
if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[2] then return 0 end
if redis.call('HEXISTS', KEYS[1], 'answer') == 1 then return 0 end
redis.call('DEL', KEYS[1])
return 1
`;

/** Shared by every gateway replica (split and cluster modes). */
export class RedisIdempotencyRegistry implements IdempotencyRegistry {
  constructor(
    private readonly redis: Redis,
    private readonly ttlMs = IDEMPOTENCY_KEY_TTL_MS,
    private readonly prefix = "corridor:gateway:idem:",
  ) {}

  async claim(scope: KeyScope, fingerprint: string): Promise<ClaimResult> {
    const res = await this.redis.eval(CLAIM_SCRIPT, 1, this.redisKey(scope), fingerprint, String(Math.max(1, Math.round(this.ttlMs))));
    if (res === "claimed" || res === "joined" || res === "conflict") return res;
    throw new Error(`unexpected idempotency claim answer ${String(res)}`);
  }

  async settle(scope: KeyScope, fingerprint: string, outcome: Settlement): Promise<boolean> {
    const res = await this.redis.eval(SETTLE_SCRIPT, 1, this.redisKey(scope), fingerprint, outcome);
    return res === 1;
  }

  async claimRecorded(scope: KeyScope, fingerprint: string, owner: string, leaseMs: number): Promise<RecordedClaim> {
    const ttl = String(Math.max(1, Math.round(this.ttlMs)));
    const res = (await this.redis.eval(CLAIM_RECORDED_SCRIPT, 1, this.redisKey(scope), fingerprint, ttl, owner, String(Math.max(1, Math.round(leaseMs))))) as unknown[];
    const [kind, answer] = res;
    if (kind === "replay" && typeof answer === "string") return { kind, answer };
    if (kind === "claimed" || kind === "in_use" || kind === "conflict") return { kind };
    throw new Error(`unexpected idempotency claim answer ${String(kind)}`);
  }

  async record(scope: KeyScope, fingerprint: string, answer: string): Promise<void> {
    await this.redis.eval(RECORD_SCRIPT, 1, this.redisKey(scope), fingerprint, answer);
  }

  async release(scope: KeyScope, fingerprint: string, owner: string): Promise<boolean> {
    return (await this.redis.eval(RELEASE_SCRIPT, 1, this.redisKey(scope), fingerprint, owner)) === 1;
  }

  /** The key's name is a hash, so a reader of Redis learns neither platform nor key (the answer's seal needs the key). */
  private redisKey(scope: KeyScope): string {
    return this.prefix + createHash("sha256").update(idOf(scope)).digest("base64url");
  }

  async close(): Promise<void> {}
}

// platformId never contains a NUL, so (platformId, key) pairs cannot collide.
const idOf = (scope: KeyScope) => `${scope.platformId}\u0000${scope.key}`;

/**
 * Where a request's key lives. An agent's keys: (platformId, `agent/<agentId>/<key>`)
 * (docs/agents.md), so the agents of one platform never collide with each other or with the
 * platform. A platform's keys: (platformId, key), except that a key starting with `agent/` or
 * `platform/` gets a `platform/` prefix, so no platform key can land in an agent's space (the
 * mapping stays one-to-one).
 */
export function keyScope(principal: Principal, key: string): KeyScope {
  if (principal.kind === "agent") return { platformId: principal.platformId, key: `agent/${principal.agentId}/${key}` };
  return { platformId: principal.platformId, key: /^(agent|platform)\//.test(key) ? `platform/${key}` : key };
}

// ---------------------------------------------------------------------------------------------
// Sealed answers. A recorded answer may carry a secret (POST /tokens answers a clientSecret), so
// it is stored encrypted (AES-256-GCM) under a key derived from the Idempotency-Key itself and
// the platform: whoever reads Redis (where the entry's name is a hash too) learns nothing of it
// without the client's key.

/** One recorded answer, as replayed: status, the headers that describe the body, the body's bytes. */
export interface RecordedAnswer {
  status: number;
  headers: Record<string, string>;
  /** The body as sent (the serialized JSON), or null for none (204). */
  body: string | null;
}

/** The answer headers a replay repeats (the others are the replaying request's own, request-id included). */
export const REPLAYED_HEADERS = ["content-type", "location", "retry-after", "x-should-retry"] as const;

function sealKey(scope: KeyScope): Buffer {
  return Buffer.from(hkdfSync("sha256", Buffer.from(scope.key, "utf8"), Buffer.from(scope.platformId, "utf8"), "corridor idempotent answer v1", 32));
}

export function sealAnswer(scope: KeyScope, answer: RecordedAnswer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", sealKey(scope), iv);
  const sealed = Buffer.concat([cipher.update(JSON.stringify(answer), "utf8"), cipher.final()]);
  return `v1.${iv.toString("base64url")}.${cipher.getAuthTag().toString("base64url")}.${sealed.toString("base64url")}`;
}

/** The answer of a sealed one, or undefined when it does not open (another key, or tampered with). */
export function openAnswer(scope: KeyScope, sealed: string): RecordedAnswer | undefined {
  const [version, iv, tag, data] = sealed.split(".");
  if (version !== "v1" || iv === undefined || tag === undefined || data === undefined) return undefined;
  try {
    const decipher = createDecipheriv("aes-256-gcm", sealKey(scope), Buffer.from(iv, "base64url"));
    decipher.setAuthTag(Buffer.from(tag, "base64url"));
    const text = Buffer.concat([decipher.update(Buffer.from(data, "base64url")), decipher.final()]).toString("utf8");
    return JSON.parse(text) as RecordedAnswer;
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// The hooks. Every POST, PUT, PATCH and DELETE of the API behind credentials takes part, in one
// of two ways (docs/idempotency.md lists the routes of each):
//
//   "service"  the route declares `idempotency-key` in its headers schema and its service stores
//              the answer with the effect (kit idempotency): the gateway only claims the key
//              across routes (claim/settle above) and passes same-fingerprint requests through;
//   "gateway"  every other one: the gateway adds the header to the route's schema and records
//              the answer itself (claimRecorded/record/release): one request at a time runs
//              under the key (the others: 409 IDEMPOTENCY_KEY_IN_USE), its answer is replayed
//              byte for byte, and a refusal (4xx) or a signing challenge (202) releases the key.
//
// The header is validated (400 INVALID_INPUT on headers.idempotency-key) before anything is claimed.

/** How a route honours Idempotency-Key. */
export type IdempotencyMode = "service" | "gateway" | "none";

const CHANGING_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);
const methodsOf = (route: Pick<RouteOptions, "method">) => (Array.isArray(route.method) ? route.method : [route.method]).map((m) => String(m).toUpperCase());

/** Whether a route declares Idempotency-Key in its headers schema. */
export function honoursIdempotencyKey(route: Pick<RouteOptions, "schema">): boolean {
  const headers = route.schema?.headers as { properties?: Record<string, unknown> } | undefined;
  return headers?.properties?.["idempotency-key"] !== undefined;
}

/**
 * The mode of a route as declared (before installIdempotency adds the header to gateway routes):
 * a declared header is the service's; any other changing route of the API behind credentials is
 * the gateway's; the rest (GETs, routes without credentials: no platform to scope a key) none.
 */
export function idempotencyModeOf(route: Pick<RouteOptions, "schema" | "method" | "url" | "config">): IdempotencyMode {
  if (honoursIdempotencyKey(route)) return (route.config as { idempotency?: string } | undefined)?.idempotency === "gateway" ? "gateway" : "service";
  if (!route.url.startsWith(`/${API_VERSION}/`)) return "none";
  if ((route.config as { auth?: string } | undefined)?.auth === "none") return "none";
  return methodsOf(route).some((m) => CHANGING_METHODS.has(m)) ? "gateway" : "none";
}

/** What the served OpenAPI adds to a gateway-recorded route's description. */
export const GATEWAY_RECORDED_NOTE =
  "Honours Idempotency-Key (recorded by the gateway, docs/idempotency.md): the same key and request within 24 h answers the first answer again, byte for byte (Idempotent-Replayed: true) and has no second effect; while the first runs 409 IDEMPOTENCY_KEY_IN_USE; the key with another route or body 422 IDEMPOTENCY_KEY_REUSED; a refused request (4xx) frees the key.";

interface RequestClaim {
  scope: KeyScope;
  fingerprint: string;
  /** False when the registry could not be asked (the request then passes unchecked). */
  claimed: boolean;
  /** The route's idempotent RPC answered: from here on the effect is the service's stored answer. */
  effectDone: boolean;
  settled: boolean;
  /** Gateway-recorded keys: this request's answer is to be recorded (or the key released). */
  recorded?: boolean;
  /** How the error this request failed with left the effect (onError), for the recording. */
  errorOutcome?: Settlement;
}

declare module "fastify" {
  interface FastifyRequest {
    idempotency?: {
      fingerprint: string;
      claim?: RequestClaim;
      /** Multipart routes: the body is read by the handler, which then claims (claimAfterBody). */
      deferred?: (content: unknown, reply: FastifyReply) => Promise<boolean>;
    };
  }
}

/**
 * Routes call this once their idempotent RPC has answered: a failure after it (a follow-up read,
 * mapping) must not release the key, because the service has stored the effect under it.
 */
export function markIdempotentEffectDone(request: FastifyRequest): void {
  const claim = request.idempotency?.claim;
  if (claim) claim.effectDone = true;
}

/**
 * A gateway-recorded multipart route (documents) calls this once it has read its body, with what
 * the body means (the fields and the file's SHA-256: a multipart encoding differs from client to
 * client, boundary included). True: the key's first answer was replayed, the route returns the reply.
 */
export async function claimAfterBody(request: FastifyRequest, reply: FastifyReply, content: unknown): Promise<boolean> {
  const deferred = request.idempotency?.deferred;
  if (!deferred) return false;
  request.idempotency!.deferred = undefined;
  return deferred(content, reply);
}

/**
 * How an error thrown after the claim ends the request for the registry. Unknown outcomes stay
 * unknown: whenever the service may have committed, the claim is kept ("committed"), so the key
 * is never released as failed and only a retry of the same request gets through, to find the
 * service's stored answer (its idempotency key commits with the effect) or to redo the effect if
 * it never committed (the service's own key was released, or its lease runs out).
 */
export function settlementOf(err: unknown): Settlement {
  if (err instanceof ConnectError) {
    const [detail] = err.findDetails(PublicErrorSchema);
    if (detail) {
      // The service's own idempotency answers: the key is (or was) someone else's to settle.
      if (detail.code === "IDEMPOTENCY_KEY_IN_USE" || detail.code === "IDEMPOTENCY_KEY_REUSED") return "undecided";
      // A dependency of the service failed (its database went away): the failure may have struck
      // at the commit, after the effect was durable.
      if (detail.outcome === "UNAVAILABLE") return "committed";
      return "failed"; // the service decided and released its own key
    }
    // No answer from the service (unreachable, reset or aborted mid-call, timed out, cancelled,
    // or an internal failure): it may have committed.
    return "committed";
  }
  return "failed";
}

export interface IdempotencyOptions {
  /** How long a gateway-recorded key stays with a request that has not answered (gateway crashed). */
  leaseMs: number;
}

export function installIdempotency(app: FastifyInstance, registry: IdempotencyRegistry, log: Logger, opts: IdempotencyOptions): void {
  app.addHook("onRoute", (route) => {
    const mode = idempotencyModeOf(route);
    if (mode === "none") return;
    if (mode === "gateway" && !honoursIdempotencyKey(route)) {
      // Declare the header on the route: it is validated like the service routes' and the served
      // OpenAPI documents it (and IDEMPOTENCY_KEY_IN_USE / _REUSED among the route's answers).
      const schema = (route.schema ?? {}) as Record<string, unknown>;
      const headers = (schema.headers ?? Type.Object({}, { description: "Idempotency-Key header." })) as { properties?: Record<string, unknown> };
      route.schema = {
        ...schema,
        headers: { ...headers, properties: { ...(headers.properties ?? {}), "idempotency-key": IdempotencyKeyHeader() } },
        ...(typeof schema.description === "string" ? { description: `${schema.description} ${GATEWAY_RECORDED_NOTE}` } : { description: GATEWAY_RECORDED_NOTE }),
      } as RouteOptions["schema"];
    }
    const recorded = mode === "gateway";
    // Routes without a body schema ignore any body sent, so it is not part of the request.
    const takesBody = route.schema?.body !== undefined;
    // A multipart body is read by the handler: it claims once it has (claimAfterBody).
    const multipart = ((route.schema as { consumes?: string[] } | undefined)?.consumes ?? []).includes("multipart/form-data");
    const add = <K extends "preValidation" | "preHandler" | "onError" | "onSend">(name: K, hook: NonNullable<RouteOptions[K]>) => {
      const existing = route[name];
      (route as unknown as Record<string, unknown>)[name] = [...(existing === undefined ? [] : Array.isArray(existing) ? existing : [existing]), hook];
    };

    // Before validation, because Ajv fills schema defaults into the body in place.
    add("preValidation", async (request: FastifyRequest) => {
      if (request.headers["idempotency-key"] === undefined) return;
      const path = filledPath(request.routeOptions.url ?? request.url.split("?", 1)[0]!, request.params);
      request.idempotency = { fingerprint: requestFingerprint(request.method, path, takesBody && !multipart ? request.body : undefined) };
    });

    // After validation and authentication: only well-formed requests of a known platform claim.
    add("preHandler", async (request: FastifyRequest, reply: FastifyReply) => {
      const key = request.headers["idempotency-key"];
      const state = request.idempotency;
      if (typeof key !== "string" || !state || !request.principal) return;
      const scope = keyScope(request.principal, key);
      if (recorded) {
        if (!multipart) {
          // A replay has sent the first answer: returning the reply ends the request here.
          if (await claimRecorded(request, reply, scope, state.fingerprint, key)) return reply;
          return;
        }
        const base = state.fingerprint;
        state.deferred = async (content, r) => {
          // The body's meaning joins the route's fingerprint (method and path).
          state.fingerprint = createHash("sha256").update(`${base}\n${canonicalJson(content)}`).digest("hex");
          return claimRecorded(request, r, scope, state.fingerprint, key);
        };
        return;
      }
      let result: ClaimResult;
      try {
        result = await registry.claim(scope, state.fingerprint);
      } catch (err) {
        // Fail open, as the rate limiter does: each service still refuses reuse on its own
        // routes, only the cross-route check is skipped while the registry is down.
        log.warn({ err }, "idempotency registry unavailable; passing the request through unchecked");
        state.claim = { scope, fingerprint: state.fingerprint, claimed: false, effectDone: false, settled: true };
        return;
      }
      if (result === "conflict") throw keyReused(key);
      state.claim = { scope, fingerprint: state.fingerprint, claimed: true, effectDone: false, settled: false };
    });

    // onError hooks run before the error handler sends the answer, so the claim is released
    // before the client can retry.
    add("onError", async (request: FastifyRequest, _reply: FastifyReply, err: Error) => {
      const claim = request.idempotency?.claim;
      if (claim?.recorded) {
        claim.errorOutcome = claim.effectDone ? "committed" : settlementOf(err);
        return;
      }
      await settle(request, claim?.effectDone ? "committed" : settlementOf(err));
    });

    add("onSend", async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
      const claim = request.idempotency?.claim;
      if (!claim || claim.settled) return payload;
      if (claim.recorded) {
        await finishRecorded(request, reply, claim, payload);
        return payload;
      }
      const outcome: Settlement = reply.statusCode < 400 || claim.effectDone ? "committed" : "failed";
      // A failure is settled before the answer, so a corrected retry finds the key released. A
      // success is not waited for: its settle releases nothing, and until it lands this request
      // still counts as running, which keeps the claim just as "committed" does.
      if (outcome === "failed") await settle(request, outcome);
      else void settle(request, outcome);
      return payload;
    });
  });

  /** Claims a gateway-recorded key; true when the first answer was replayed (the reply is sent). */
  async function claimRecorded(request: FastifyRequest, reply: FastifyReply, scope: KeyScope, fingerprint: string, key: string): Promise<boolean> {
    const state = request.idempotency!;
    let result: RecordedClaim;
    try {
      result = await registry.claimRecorded(scope, fingerprint, request.id, opts.leaseMs);
    } catch (err) {
      // Refuse rather than run unguarded: no service keeps these keys, so passing the request
      // through could repeat its effect. 503, and the client retries with the same key.
      log.warn({ err }, "idempotency registry unavailable; refusing a request that carries an Idempotency-Key");
      throw new AppError("UNAVAILABLE", "SERVICE_UNAVAILABLE", "Idempotency-Key cannot be checked right now; retry with the same key", {});
    }
    if (result.kind === "conflict") throw keyReused(key);
    if (result.kind === "in_use") throw keyInUse(key);
    if (result.kind === "replay") {
      const answer = openAnswer(scope, result.answer);
      if (!answer) {
        // Only a changed or damaged registry entry gets here: never run the request again under it.
        log.error({ route: request.routeOptions.url }, "a recorded Idempotency-Key answer did not open");
        throw new AppError("UNAVAILABLE", "SERVICE_UNAVAILABLE", "The first answer of this Idempotency-Key cannot be read; retry later", {});
      }
      state.claim = { scope, fingerprint, claimed: true, effectDone: false, settled: true, recorded: true };
      reply.code(answer.status);
      for (const [name, value] of Object.entries(answer.headers)) reply.header(name, value);
      reply.header("idempotent-replayed", "true");
      await reply.send(answer.body ?? undefined);
      return true;
    }
    state.claim = { scope, fingerprint, claimed: true, effectDone: false, settled: false, recorded: true };
    return false;
  }

  /**
   * Ends a gateway-recorded request: its answer is recorded when it had (or may have had) its
   * effect — every 2xx but a signing challenge (202), a failure after markIdempotentEffectDone;
   * the key is released when it had none (a refusal, a challenge); when the service may or may
   * not have acted (no answer from it), nothing is recorded and the claim stays until its lease
   * runs out, so duplicates meanwhile get 409 and a later retry runs.
   */
  async function finishRecorded(request: FastifyRequest, reply: FastifyReply, claim: RequestClaim, payload: unknown): Promise<void> {
    claim.settled = true;
    const status = reply.statusCode;
    const outcome: Settlement | "challenge" =
      status === 202 ? "challenge" : status < 400 || claim.effectDone ? "committed" : (claim.errorOutcome ?? (status < 500 ? "failed" : "committed"));
    try {
      if (outcome === "committed" && status < 500) {
        const body = payload === null || payload === undefined ? null : typeof payload === "string" ? payload : Buffer.isBuffer(payload) ? payload.toString("utf8") : undefined;
        if (body === undefined) return; // a streamed answer cannot be recorded: the lease keeps the key
        const headers: Record<string, string> = {};
        for (const name of REPLAYED_HEADERS) {
          const value = reply.getHeader(name);
          if (value !== undefined) headers[name] = String(value);
        }
        await registry.record(claim.scope, claim.fingerprint, sealAnswer(claim.scope, { status, headers, body }));
      } else if (outcome === "failed" || outcome === "challenge" || outcome === "undecided") {
        await registry.release(claim.scope, claim.fingerprint, request.id);
      }
      // A 5xx that may have had its effect: the claim stays until its lease runs out.
    } catch (err) {
      log.error({ err, outcome }, "could not record the answer of an Idempotency-Key");
    }
  }

  async function settle(request: FastifyRequest, outcome: Settlement): Promise<void> {
    const claim = request.idempotency?.claim;
    if (!claim || claim.settled || !claim.claimed) return;
    claim.settled = true;
    try {
      await registry.settle(claim.scope, claim.fingerprint, outcome);
    } catch (err) {
      // The claim then stays until it expires: a retry with the same request still works.
      log.error({ err, outcome }, "could not settle an Idempotency-Key claim");
    }
  }
}

function keyReused(key: string): AppError {
  return new AppError("UNPROCESSABLE", "IDEMPOTENCY_KEY_REUSED", "This Idempotency-Key was used with a different request (another route or body)", { idempotencyKey: key });
}

function keyInUse(key: string): AppError {
  return new AppError("CONFLICT", "IDEMPOTENCY_KEY_IN_USE", "A request with this Idempotency-Key is still being processed; retry later", { idempotencyKey: key }, { shouldNotRetry: false });
}
