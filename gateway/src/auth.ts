import { createHash, timingSafeEqual } from "node:crypto";
import type { Client } from "@connectrpc/connect";
import type { JsonObject } from "@bufbuild/protobuf";
import { AppError, appErrorFromConnect, errors, type Logger } from "@corridor/kit";
import { AgentsService } from "@corridor/proto/corridor/agents/v1/agents_service_pb.js";
import { AuthSessionsService } from "@corridor/proto/corridor/auth_sessions/v1/auth_sessions_service_pb.js";
import { Environment } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import type { FastifyRequest, RouteOptions } from "fastify";
import type { Redis } from "ioredis";
import { BasicAuthError } from "./errors.js";
import { permissionsFromProto, type PermissionName } from "./mappers/tokens.js";

/**
 * How a route authenticates. `basic` (the default) is a platform API token; `bearer` is an agent
 * access token (the /agents/me routes); `none` is for the contract, docs, probes and device-code
 * redemption. A route takes exactly one scheme: Bearer on a Basic route, or Basic on a Bearer
 * route, is 401.
 */
export type AuthScheme = "basic" | "bearer" | "none";

/** Who is calling: a platform (Basic) or one of its agents (Bearer). */
export type Principal = PlatformPrincipal | AgentPrincipal;

/** Permissions of an agent's policy (docs/agents.md "Permissions"). */
export const AGENT_PERMISSIONS = ["VIEW_TRANSACTIONS", "CREATE_QUOTES", "EXECUTE_QUOTES", "CREATE_TRANSFERS", "MANAGE_EXTERNAL_ACCOUNTS"] as const;
export type AgentPermissionName = (typeof AGENT_PERMISSIONS)[number];

/** An agent authenticated by its Bearer access token, bound to one customer of one platform. */
export interface AgentPrincipal {
  kind: "agent";
  platformId: string;
  agentId: string;
  customerId: string;
  permissions: string[];
  isPaused: boolean;
}

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
    /** Policy permission a bearer route needs (403 FORBIDDEN without it); required on non-GET bearer routes. */
    agentPermission?: AgentPermissionName;
    /** A bearer route a paused agent may still call (only GET /agents/me); others answer 403 AGENT_PAUSED. */
    allowPausedAgent?: boolean;
    /** Sandbox endpoints answer 403 FORBIDDEN to production platforms. */
    sandboxOnly?: boolean;
  }
  interface FastifyRequest {
    principal?: Principal;
  }
}

/** A failed Basic authentication (answered with the Basic challenge). */
export const unauthorized = (message?: string, details?: JsonObject) => new BasicAuthError(message, details);

/** The platform calling a Basic route (a programming error on any other route). */
export function principalOf(request: FastifyRequest): PlatformPrincipal {
  const p = request.principal;
  if (!p || p.kind !== "platform") throw new Error(`route ${request.routeOptions.url} used without Basic authentication`);
  return p;
}

/** The agent calling a Bearer route (a programming error on any other route). */
export function agentOf(request: FastifyRequest): AgentPrincipal {
  const p = request.principal;
  if (!p || p.kind !== "agent") throw new Error(`route ${request.routeOptions.url} used without Bearer authentication`);
  return p;
}

/** A failed Bearer authentication: 401 UNAUTHORIZED without the Basic challenge. */
const bearerUnauthorized = (message = "Missing or invalid agent access token", details: JsonObject = {}) => new AppError("UNAUTHENTICATED", "UNAUTHORIZED", message, details);

/** The token of `Authorization: Bearer <token>`; undefined when the header is absent or another scheme. */
export function parseBearer(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const m = /^Bearer[ ]+([\x21-\x7E]{1,512})\s*$/i.exec(header);
  return m?.[1];
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * The credentials of `Authorization: Basic …`; undefined when absent or malformed. The decoded
 * text must be valid UTF-8 without control characters (RFC 7617): credentials with a NUL, a lone
 * surrogate or invalid bytes are a 401 here and never reach auth-sessions (or its database).
 */
export function parseBasic(header: string | undefined): { clientId: string; clientSecret: string } | undefined {
  if (!header) return undefined;
  const m = /^Basic[ ]+([A-Za-z0-9+/=_-]{1,2048})\s*$/i.exec(header);
  if (!m) return undefined;
  let decoded: string;
  try {
    decoded = strictUtf8.decode(Buffer.from(m[1]!, "base64"));
  } catch {
    return undefined;
  }
  if (/[\u0000-\u001f\u007f]/.test(decoded)) return undefined;
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
  agentsClient: Client<typeof AgentsService>;
  cache: AuthCache;
  ttlMs: number;
  log: Logger;
}): Authenticator {
  const { authClient, agentsClient, cache, ttlMs, log } = opts;

  async function basic(request: FastifyRequest): Promise<PlatformPrincipal> {
    if (parseBearer(request.headers.authorization) !== undefined) {
      throw unauthorized("Agent access tokens (Bearer) work only on the /agents/me routes; send HTTP Basic credentials");
    }
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
      const refusal = appErrorFromConnect(err);
      if (refusal?.outcome === "UNAUTHENTICATED") throw unauthorized(refusal.message, refusal.details);
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

  // No cache: a deleted agent's token, or a paused agent, must take effect on the next request.
  async function bearer(request: FastifyRequest): Promise<AgentPrincipal> {
    const header = request.headers.authorization;
    const token = parseBearer(header);
    if (token === undefined) {
      throw bearerUnauthorized(
        parseBasic(header) ? "The /agents/me routes take an agent access token (Bearer), not Basic credentials" : "Send the agent access token: Authorization: Bearer agt_…",
      );
    }
    let res: Awaited<ReturnType<typeof agentsClient.authenticateAgent>>;
    try {
      res = await agentsClient.authenticateAgent({ accessToken: token });
    } catch (err) {
      // The service refusing the token is a 401; its other errors (unreachable) stay as they are.
      const refusal = appErrorFromConnect(err);
      if (refusal && ["INVALID", "UNAUTHENTICATED", "NOT_FOUND"].includes(refusal.outcome)) throw bearerUnauthorized();
      throw err;
    }
    const agent = res.agent;
    if (!agent) throw new Error("agents answered AuthenticateAgent without an agent");
    return {
      kind: "agent",
      platformId: agent.platformId,
      agentId: agent.id,
      customerId: agent.customerId,
      permissions: [...(agent.policy?.permissions ?? [])],
      isPaused: agent.isPaused,
    };
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
        case "bearer": {
          const agent = await bearer(request);
          request.principal = agent;
          // docs/agents.md: paused first, then the permission.
          if (agent.isPaused && !config.allowPausedAgent) {
            throw new AppError("FORBIDDEN", "AGENT_PAUSED", "This agent is paused; the platform can resume it with PATCH /agents/{agentId}", { agentId: agent.agentId });
          }
          const neededByAgent = config.agentPermission;
          if (neededByAgent && !agent.permissions.includes(neededByAgent)) {
            throw errors.forbidden(`This agent's policy lacks the ${neededByAgent} permission`, { requiredPermission: neededByAgent });
          }
          return;
        }
      }
      const platform = request.principal as PlatformPrincipal;
      const needed = requiredPermission(request.method, config.permission);
      if (needed && !platform.permissions.includes(needed)) {
        throw errors.forbidden(`This token lacks the ${needed} permission`, { requiredPermission: needed });
      }
      if (config.sandboxOnly && platform.environment !== "SANDBOX") {
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

/**
 * Startup check: an authenticated route that changes things must say which permission it needs —
 * a token permission on Basic routes, a policy permission on Bearer routes — and never the other
 * scheme's kind.
 */
export function assertRoutePermission(route: RouteOptions): void {
  const config = (route.config ?? {}) as { auth?: AuthScheme; permission?: PermissionName; agentPermission?: AgentPermissionName; allowPausedAgent?: boolean };
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  const readOnly = methods.every((m) => m === "GET" || m === "HEAD");
  const scheme = config.auth ?? "basic";
  const name = `route ${methods.join(",")} ${route.url}`;
  if (scheme === "bearer") {
    if (config.permission) throw new Error(`${name} is a bearer route: use config.agentPermission, not config.permission`);
    if (!readOnly && !config.agentPermission) throw new Error(`${name} needs config.agentPermission`);
    if (config.allowPausedAgent && !readOnly) throw new Error(`${name}: only read-only routes may allow paused agents`);
    return;
  }
  if (config.agentPermission || config.allowPausedAgent) throw new Error(`${name} is not a bearer route: agentPermission and allowPausedAgent do not apply`);
  if (scheme !== "none" && !readOnly && !config.permission) {
    throw new Error(`${name} needs config.permission`);
  }
}

