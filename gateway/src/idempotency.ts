import { createHash } from "node:crypto";
import { ConnectError } from "@connectrpc/connect";
import { AppError, IDEMPOTENCY_KEY_TTL_MS, canonicalJson, type Logger } from "@corridor/kit";
import { PublicErrorSchema } from "@corridor/proto/corridor/common/v1/error_pb.js";
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from "fastify";
import type { Redis } from "ioredis";
import type { Principal } from "./auth.js";

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

/** Where claims live: Redis when the gateway has one (shared by replicas), else this process. */
export interface IdempotencyRegistry {
  claim(scope: KeyScope, fingerprint: string): Promise<ClaimResult>;
  /** Ends one request under the claim; answers true when that released the claim. */
  settle(scope: KeyScope, fingerprint: string, outcome: Settlement): Promise<boolean>;
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

/** Shared by every gateway replica (split and cluster modes). */
export class RedisIdempotencyRegistry implements IdempotencyRegistry {
  constructor(
    private readonly redis: Redis,
    private readonly ttlMs = IDEMPOTENCY_KEY_TTL_MS,
    private readonly prefix = "corridor:gateway:idem:",
  ) {}

  async claim(scope: KeyScope, fingerprint: string): Promise<ClaimResult> {
    const res = await this.redis.eval(CLAIM_SCRIPT, 1, this.prefix + idOf(scope), fingerprint, String(Math.max(1, Math.round(this.ttlMs))));
    if (res === "claimed" || res === "joined" || res === "conflict") return res;
    throw new Error(`unexpected idempotency claim answer ${String(res)}`);
  }

  async settle(scope: KeyScope, fingerprint: string, outcome: Settlement): Promise<boolean> {
    const res = await this.redis.eval(SETTLE_SCRIPT, 1, this.prefix + idOf(scope), fingerprint, outcome);
    return res === 1;
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
// The hooks. A route takes part when its headers schema declares `idempotency-key`: the header
// is then validated (400 INVALID_INPUT on headers.idempotency-key) before the claim is made.

interface RequestClaim {
  scope: KeyScope;
  fingerprint: string;
  /** False when the registry could not be asked (the request then passes unchecked). */
  claimed: boolean;
  /** The route's idempotent RPC answered: from here on the effect is the service's stored answer. */
  effectDone: boolean;
  settled: boolean;
}

declare module "fastify" {
  interface FastifyRequest {
    idempotency?: { fingerprint: string; claim?: RequestClaim };
  }
}

/** Whether a route honours Idempotency-Key (declares the header in its schema). */
export function honoursIdempotencyKey(route: Pick<RouteOptions, "schema">): boolean {
  const headers = route.schema?.headers as { properties?: Record<string, unknown> } | undefined;
  return headers?.properties?.["idempotency-key"] !== undefined;
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

export function installIdempotency(app: FastifyInstance, registry: IdempotencyRegistry, log: Logger): void {
  app.addHook("onRoute", (route) => {
    if (!honoursIdempotencyKey(route)) return;
    // Routes without a body schema ignore any body sent, so it is not part of the request.
    const takesBody = route.schema?.body !== undefined;
    const add = <K extends "preValidation" | "preHandler" | "onError" | "onSend">(name: K, hook: NonNullable<RouteOptions[K]>) => {
      const existing = route[name];
      (route as unknown as Record<string, unknown>)[name] = [...(existing === undefined ? [] : Array.isArray(existing) ? existing : [existing]), hook];
    };

    // Before validation, because Ajv fills schema defaults into the body in place.
    add("preValidation", async (request: FastifyRequest) => {
      if (request.headers["idempotency-key"] === undefined) return;
      const path = filledPath(request.routeOptions.url ?? request.url.split("?", 1)[0]!, request.params);
      request.idempotency = { fingerprint: requestFingerprint(request.method, path, takesBody ? request.body : undefined) };
    });

    // After validation and authentication: only well-formed requests of a known platform claim.
    add("preHandler", async (request: FastifyRequest) => {
      const key = request.headers["idempotency-key"];
      const state = request.idempotency;
      if (typeof key !== "string" || !state || !request.principal) return;
      const scope = keyScope(request.principal, key);
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
      if (result === "conflict") {
        throw new AppError("UNPROCESSABLE", "IDEMPOTENCY_KEY_REUSED", "This Idempotency-Key was used with a different request (another route or body)", {
          idempotencyKey: key,
        });
      }
      state.claim = { scope, fingerprint: state.fingerprint, claimed: true, effectDone: false, settled: false };
    });

    // onError hooks run before the error handler sends the answer, so the claim is released
    // before the client can retry.
    add("onError", async (request: FastifyRequest, _reply: FastifyReply, err: Error) => {
      await settle(request, request.idempotency?.claim?.effectDone ? "committed" : settlementOf(err));
    });

    add("onSend", async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
      const claim = request.idempotency?.claim;
      if (!claim || claim.settled) return payload;
      const outcome: Settlement = reply.statusCode < 400 || claim.effectDone ? "committed" : "failed";
      // A failure is settled before the answer, so a corrected retry finds the key released. A
      // success is not waited for: its settle releases nothing, and until it lands this request
      // still counts as running, which keeps the claim just as "committed" does.
      if (outcome === "failed") await settle(request, outcome);
      else void settle(request, outcome);
      return payload;
    });
  });

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
