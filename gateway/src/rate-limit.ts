import { createHash } from "node:crypto";
import rateLimit from "@fastify/rate-limit";
import { AppError, type Logger } from "@corridor/kit";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Redis } from "ioredis";
import { claimedClientId, parseBearer } from "./auth.js";
import { GATEWAY_DEFAULTS } from "./config.js";

export interface RateLimitOptions {
  max: number;
  timeWindowMs: number;
}

/** The defaults of the gateway's config schema (config.ts), the only place they are written. */
export const DEFAULT_RATE_LIMIT: RateLimitOptions = { max: GATEWAY_DEFAULTS.RATE_LIMIT_MAX, timeWindowMs: GATEWAY_DEFAULTS.RATE_LIMIT_WINDOW_MS };
export const DEFAULT_AUTH_FAILURE_LIMIT: RateLimitOptions = { max: GATEWAY_DEFAULTS.AUTH_FAILURE_LIMIT_MAX, timeWindowMs: GATEWAY_DEFAULTS.AUTH_FAILURE_WINDOW_MS };

const rateLimited = (limit: number, retryAfterSeconds: number, what = "requests") =>
  new AppError("RATE_LIMITED", "RATE_LIMITED", `Too many ${what}; retry after ${retryAfterSeconds} seconds`, { limit, retryAfterSeconds });

/**
 * The request limit, keyed on who the request is once authenticated (decisions §2): the API token
 * (its id, so every replica and every clientId spelling agree), the agent for Bearer tokens, the
 * client IP on routes without authentication. It runs after authentication (preParsing, after the
 * onRequest auth hook), so requests that fail to authenticate never spend a token's budget: a
 * stranger who knows a clientId cannot lock its token out. Those failures have their own throttle
 * (AuthFailureThrottle). With Redis the counters are shared by every gateway replica.
 * Routes opt out with `config: { rateLimit: false }` (the probes).
 */
export async function registerRateLimit(app: FastifyInstance, opts: RateLimitOptions, redis?: Redis): Promise<void> {
  await app.register(rateLimit, {
    global: true,
    max: opts.max,
    timeWindow: opts.timeWindowMs,
    hook: "preParsing",
    ...(redis ? { redis, nameSpace: "corridor:gateway:rl:", skipOnError: true } : {}),
    keyGenerator: (request) => {
      const p = request.principal;
      if (p?.kind === "platform") return `token:${p.tokenId}`;
      if (p?.kind === "agent") return `agent:${p.agentId}`;
      return `ip:${request.ip}`;
    },
    errorResponseBuilder: (_request, context) => rateLimited(context.max, Math.ceil(context.ttl / 1000)),
  });
}

// ---------------------------------------------------------------------------------------------
// Failed authentications.

/** A fixed-window counter: the count after this hit, and the milliseconds until the window resets. */
export interface FailureCounter {
  hit(key: string, windowMs: number): Promise<{ count: number; resetInMs: number }>;
  /** The count of the current window without adding to it (0 when there is none). */
  peek(key: string): Promise<{ count: number; resetInMs: number }>;
}

/** One process (embedded mode, tests). Bounded: past `maxKeys` the oldest windows are dropped. */
export class MemoryFailureCounter implements FailureCounter {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();
  constructor(
    private readonly now: () => number = Date.now,
    private readonly maxKeys = 100_000,
  ) {}

  async hit(key: string, windowMs: number) {
    const now = this.now();
    let w = this.windows.get(key);
    if (!w || w.resetAt <= now) {
      this.windows.delete(key);
      // Windows all last the same time, so the first inserted is the first to end.
      if (this.windows.size >= this.maxKeys) this.windows.delete(this.windows.keys().next().value!);
      w = { count: 0, resetAt: now + windowMs };
      this.windows.set(key, w);
    }
    w.count++;
    return { count: w.count, resetInMs: w.resetAt - now };
  }

  async peek(key: string) {
    const now = this.now();
    const w = this.windows.get(key);
    return w && w.resetAt > now ? { count: w.count, resetInMs: w.resetAt - now } : { count: 0, resetInMs: 0 };
  }
}

const HIT_SCRIPT = `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {n, ttl}
`;

/** Shared by every gateway replica. */
export class RedisFailureCounter implements FailureCounter {
  constructor(
    private readonly redis: Redis,
    private readonly prefix = "corridor:gateway:authfail:",
  ) {}

  async hit(key: string, windowMs: number) {
    const [count, ttl] = (await this.redis.eval(HIT_SCRIPT, 1, this.prefix + key, String(Math.max(1, Math.round(windowMs))))) as [number, number];
    return { count: Number(count), resetInMs: Number(ttl) };
  }

  async peek(key: string) {
    const [count, ttl] = await Promise.all([this.redis.get(this.prefix + key), this.redis.pttl(this.prefix + key)]);
    return { count: Number(count ?? 0), resetInMs: Math.max(0, Number(ttl)) };
  }
}

/** Whether an error from the auth hook is a failed authentication (401), rather than a refusal of a known caller (403) or an outage. */
const isAuthFailure = (err: unknown) => err instanceof AppError && err.outcome === "UNAUTHENTICATED";

/**
 * Throttles failed authentications per (client IP, claimed identity): the Basic clientId the
 * request claims, or a hash of the Bearer token (requests without well-formed credentials are
 * refused locally and not counted). It never blocks the genuine secret — a
 * request is always authenticated first, and one that succeeds passes whatever the counter says;
 * only failures count, and once a source has failed more than `max` times in the window its
 * failures answer 429 RATE_LIMITED with Retry-After instead of 401. Guessing stays slow and a
 * flood of wrong secrets costs the real token nothing (decisions §2).
 */
export class AuthFailureThrottle {
  constructor(
    private readonly counter: FailureCounter,
    private readonly opts: RateLimitOptions,
    private readonly log: Logger,
  ) {}

  /** Runs `authenticate`; a 401 it throws is counted, and turned into a 429 past the limit. */
  async guard(request: FastifyRequest, reply: FastifyReply, authenticate: () => Promise<void>): Promise<void> {
    try {
      await authenticate();
    } catch (err) {
      if (isAuthFailure(err)) await this.failed(request, reply);
      throw err;
    }
  }

  private async failed(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    // Without well-formed credentials there is no secret to guess and nothing was asked of
    // auth-sessions: the 401 costs nothing and is not counted.
    const claimed = claimedIdentity(request.headers.authorization);
    if (claimed === undefined) return;
    let hit: { count: number; resetInMs: number };
    try {
      hit = await this.counter.hit(`${request.ip}|${claimed}`, this.opts.timeWindowMs);
    } catch (err) {
      // Fail open, as the request limit does: the 401 stands.
      this.log.warn({ err }, "auth failure counter unavailable");
      return;
    }
    if (hit.count <= this.opts.max) return;
    const retryAfterSeconds = Math.max(1, Math.ceil(hit.resetInMs / 1000));
    reply.header("retry-after", String(retryAfterSeconds));
    throw rateLimited(this.opts.max, retryAfterSeconds, "failed authentications from this address for these credentials");
  }
}

/**
 * Throttles guessing of a short secret that needs no credentials (device codes: about 40 bits, so
 * unlike a token secret they can be guessed). Unlike AuthFailureThrottle it refuses BEFORE trying
 * once an address has failed `max` times in the window, so a refused guess teaches nothing; the
 * cost is that a genuine redeem from that same address waits out the window.
 */
export class GuessThrottle {
  constructor(
    private readonly counter: FailureCounter,
    private readonly opts: RateLimitOptions,
    private readonly log: Logger,
  ) {}

  /** Runs `attempt` unless `what` failed too often from this address; counts the failures `isGuessWrong` recognises. */
  async guard<T>(request: FastifyRequest, reply: FastifyReply, what: string, attempt: () => Promise<T>, isGuessWrong: (err: unknown) => boolean): Promise<T> {
    const key = `guess|${what}|${request.ip}`;
    let seen = { count: 0, resetInMs: 0 };
    try {
      seen = await this.counter.peek(key);
    } catch (err) {
      this.log.warn({ err }, "guess counter unavailable");
    }
    if (seen.count >= this.opts.max) {
      const retryAfterSeconds = Math.max(1, Math.ceil(seen.resetInMs / 1000));
      reply.header("retry-after", String(retryAfterSeconds));
      throw rateLimited(this.opts.max, retryAfterSeconds, `failed ${what} attempts from this address`);
    }
    try {
      return await attempt();
    } catch (err) {
      if (isGuessWrong(err)) await this.counter.hit(key, this.opts.timeWindowMs).catch((e) => this.log.warn({ err: e }, "guess counter unavailable"));
      throw err;
    }
  }
}

/** Who a request claims to be, unverified: `basic:<clientId>`, `bearer:<hash>`, or undefined without well-formed credentials. */
function claimedIdentity(authorization: string | undefined): string | undefined {
  const clientId = claimedClientId(authorization);
  if (clientId !== undefined) return `basic:${clientId}`;
  const token = parseBearer(authorization);
  if (token !== undefined) return `bearer:${createHash("sha256").update(token).digest("hex").slice(0, 32)}`;
  return undefined;
}
