import rateLimit from "@fastify/rate-limit";
import { AppError } from "@corridor/kit";
import type { FastifyInstance } from "fastify";
import type { Redis } from "ioredis";
import { claimedClientId } from "./auth.js";

export interface RateLimitOptions {
  max: number;
  timeWindowMs: number;
}

export const DEFAULT_RATE_LIMIT: RateLimitOptions = { max: 600, timeWindowMs: 60_000 };

/**
 * Per-credential rate limit (the Basic clientId the request claims), else per client IP. It runs
 * before authentication on purpose: failed logins count too, so guessing secrets is throttled and
 * cannot flood auth-sessions. With Redis the counters are shared by every gateway replica.
 * Routes opt out with `config: { rateLimit: false }` (the probes).
 */
export async function registerRateLimit(app: FastifyInstance, opts: RateLimitOptions, redis?: Redis): Promise<void> {
  await app.register(rateLimit, {
    global: true,
    max: opts.max,
    timeWindow: opts.timeWindowMs,
    hook: "onRequest",
    ...(redis ? { redis, nameSpace: "corridor:gateway:rl:", skipOnError: true } : {}),
    keyGenerator: (request) => {
      const clientId = claimedClientId(request.headers.authorization);
      return clientId ? `cred:${clientId}` : `ip:${request.ip}`;
    },
    errorResponseBuilder: (_request, context) =>
      new AppError(429, "RATE_LIMITED", `Too many requests; retry after ${context.after}`, {
        limit: context.max,
        retryAfterSeconds: Math.ceil(context.ttl / 1000),
      }),
  });
}
