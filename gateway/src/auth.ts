import { createHash, timingSafeEqual } from "node:crypto";
import type { Client } from "@connectrpc/connect";
import type { JsonObject } from "@bufbuild/protobuf";
import { errors, publicErrorFromConnect, type Logger } from "@corridor/kit";
import { AuthSessionsService } from "@corridor/proto/corridor/auth_sessions/v1/auth_sessions_service_pb.js";
import { Environment } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import type { FastifyRequest, RouteOptions } from "fastify";
import type { Redis } from "ioredis";
import { BasicAuthError } from "./errors.js";
import { permissionsFromProto, type PermissionName } from "./mappers/tokens.js";

/**
 * How a route authenticates. `basic` (the default) is a platform API token; `none` is for the
 * contract, docs and probes. Agent Bearer tokens will be one more scheme and one more case in
 * `authenticate` below.
 */
export type AuthScheme = "basic" | "none";

/** Who is calling. A union so that the agent principal (Bearer) can join it later. */
export type Principal = PlatformPrincipal;

export interface PlatformPrincipal {
  kind: "platform";
  platformId: string;
  tokenId: string;
  clientId: string;
  permissions: PermissionName[];
  environment: "SANDBOX" | "PRODUCTION";
}

declare module "fastify" {
  interface FastifyContextConfig {
    /** Authentication scheme of the route; `basic` when absent. */
    auth?: AuthScheme;
    /** Token permission the route needs; VIEW for GETs when absent, required on other basic routes. */
    permission?: PermissionName;
    /** Sandbox endpoints answer 403 FORBIDDEN to production platforms. */
    sandboxOnly?: boolean;
  }
  interface FastifyRequest {
    principal?: Principal;
  }
}

/** A failed Basic authentication (answered with the Basic challenge). */
export const unauthorized = (message?: string, details?: JsonObject) => new BasicAuthError(message, details);

/** The authenticated principal of a route that requires one (a programming error otherwise). */
export function principalOf(request: FastifyRequest): PlatformPrincipal {
  const p = request.principal;
  if (!p) throw new Error(`route ${request.routeOptions.url} used without authentication`);
  return p;
}

export function parseBasic(header: string | undefined): { clientId: string; clientSecret: string } | undefined {
  if (!header) return undefined;
  const m = /^Basic[ ]+([A-Za-z0-9+/=_-]+)\s*$/i.exec(header);
  if (!m) return undefined;
  const decoded = Buffer.from(m[1]!, "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon <= 0) return undefined;
  const clientId = decoded.slice(0, colon);
  const clientSecret = decoded.slice(colon + 1);
  if (!clientSecret || clientId.length > 256 || clientSecret.length > 512) return undefined;
  return { clientId, clientSecret };
}

/** Only the clientId, unverified: the rate-limit key of a request that presents Basic credentials. */
export function claimedClientId(header: string | undefined): string | undefined {
  return parseBasic(header)?.clientId;
}

const sha256 = (s: string) => createHash("sha256").update(s, "utf8").digest();

// ---------------------------------------------------------------------------------------------
// Cache of verified principals, keyed by clientId. It stores the SHA-256 of the secret that was
// verified (never the secret), so a hit still proves the caller knows the secret.

interface CachedPrincipal {
  secretSha256: string; // hex
  principal: PlatformPrincipal;
}

export interface AuthCache {
  get(clientId: string): Promise<CachedPrincipal | undefined>;
  set(clientId: string, entry: CachedPrincipal, ttlMs: number): Promise<void>;
  evict(clientId: string): Promise<void>;
  close(): Promise<void>;
}

/** One process only: with several gateway replicas, use Redis so that evictions reach them all. */
export class MemoryAuthCache implements AuthCache {
  private readonly entries = new Map<string, { entry: CachedPrincipal; expiresAt: number }>();
  constructor(
    private readonly now: () => number = Date.now,
    private readonly maxEntries = 10_000,
  ) {}

  async get(clientId: string) {
    const hit = this.entries.get(clientId);
    if (!hit) return undefined;
    if (hit.expiresAt <= this.now()) {
      this.entries.delete(clientId);
      return undefined;
    }
    return hit.entry;
  }

  async set(clientId: string, entry: CachedPrincipal, ttlMs: number) {
    // Map keeps insertion order: dropping the first key drops the oldest entry.
    if (this.entries.size >= this.maxEntries && !this.entries.has(clientId)) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(clientId, { entry, expiresAt: this.now() + ttlMs });
  }

  async evict(clientId: string) {
    this.entries.delete(clientId);
  }

  async close() {
    this.entries.clear();
  }
}

/** Shared by every replica, so deleting a token on one replica locks it out on all of them. */
export class RedisAuthCache implements AuthCache {
  constructor(
    private readonly redis: Redis,
    private readonly prefix = "corridor:gateway:auth:",
  ) {}

  async get(clientId: string) {
    const raw = await this.redis.get(this.prefix + clientId);
    return raw ? (JSON.parse(raw) as CachedPrincipal) : undefined;
  }

  async set(clientId: string, entry: CachedPrincipal, ttlMs: number) {
    await this.redis.set(this.prefix + clientId, JSON.stringify(entry), "PX", Math.max(1, Math.round(ttlMs)));
  }

  async evict(clientId: string) {
    await this.redis.del(this.prefix + clientId);
  }

  async close() {}
}

// ---------------------------------------------------------------------------------------------

export interface Authenticator {
  /** The onRequest hook every route gets; it reads the route's config at request time. */
  hook(request: FastifyRequest): Promise<void>;
  /** Forget a clientId at once (after its token is deleted). */
  evict(clientId: string): Promise<void>;
}

export function createAuthenticator(opts: {
  authClient: Client<typeof AuthSessionsService>;
  cache: AuthCache;
  ttlMs: number;
  log: Logger;
}): Authenticator {
  const { authClient, cache, ttlMs, log } = opts;

  async function basic(request: FastifyRequest): Promise<PlatformPrincipal> {
    const creds = parseBasic(request.headers.authorization);
    if (!creds) throw unauthorized("Send HTTP Basic credentials: the token's clientId and clientSecret");
    const presented = sha256(creds.clientSecret);

    let cached: CachedPrincipal | undefined;
    try {
      cached = await cache.get(creds.clientId);
    } catch (err) {
      log.warn({ err }, "auth cache read failed; asking auth-sessions");
    }
    if (cached) {
      const stored = Buffer.from(cached.secretSha256, "hex");
      if (stored.length === presented.length && timingSafeEqual(stored, presented)) return cached.principal;
      // A token's secret never changes, so a different secret for a cached clientId is wrong.
      throw unauthorized();
    }

    let res: Awaited<ReturnType<typeof authClient.authenticate>>;
    try {
      res = await authClient.authenticate({ clientId: creds.clientId, clientSecret: creds.clientSecret });
    } catch (err) {
      // auth-sessions refusing the credentials is a Basic failure; its other errors (unreachable) stay as they are.
      const { body } = publicErrorFromConnect(err);
      if (body.status === 401) throw unauthorized(body.message, body.details);
      throw err;
    }
    const principal: PlatformPrincipal = {
      kind: "platform",
      platformId: res.platformId,
      tokenId: res.tokenId,
      clientId: creds.clientId,
      permissions: permissionsFromProto(res.permissions),
      environment: res.environment === Environment.PRODUCTION ? "PRODUCTION" : "SANDBOX",
    };
    try {
      await cache.set(creds.clientId, { secretSha256: presented.toString("hex"), principal }, ttlMs);
    } catch (err) {
      log.warn({ err }, "auth cache write failed");
    }
    return principal;
  }

  return {
    async hook(request) {
      if (request.is404) return; // unknown routes answer 404 whoever asks
      const config = request.routeOptions.config;
      const scheme: AuthScheme = config.auth ?? "basic";
      switch (scheme) {
        case "none":
          return;
        case "basic":
          request.principal = await basic(request);
          break;
      }
      const needed = requiredPermission(request.method, config.permission);
      if (needed && !request.principal!.permissions.includes(needed)) {
        throw errors.forbidden(`This token lacks the ${needed} permission`, { requiredPermission: needed });
      }
      if (config.sandboxOnly && request.principal!.environment !== "SANDBOX") {
        throw errors.forbidden("Sandbox endpoints are available only to sandbox platforms");
      }
    },
    async evict(clientId) {
      // The delete already happened and cannot be replayed, so a cache failure must not fail the
      // request; the entry then lives at most the cache TTL. Logged loudly because it matters.
      try {
        await cache.evict(clientId);
      } catch (err) {
        log.error({ err, clientId }, "could not evict a deleted token from the auth cache");
      }
    },
  };
}

function requiredPermission(method: string, declared: PermissionName | undefined): PermissionName | undefined {
  if (declared) return declared;
  return method === "GET" || method === "HEAD" ? "VIEW" : undefined;
}

/** Startup check: an authenticated route that changes things must say which permission it needs. */
export function assertRoutePermission(route: RouteOptions): void {
  const config = (route.config ?? {}) as { auth?: AuthScheme; permission?: PermissionName };
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  const readOnly = methods.every((m) => m === "GET" || m === "HEAD");
  if ((config.auth ?? "basic") !== "none" && !readOnly && !config.permission) {
    throw new Error(`route ${methods.join(",")} ${route.url} needs config.permission`);
  }
}

