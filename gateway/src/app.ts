import type { Transport } from "@connectrpc/connect";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { boardedCopies, configVersion, newId, redisConfigBoard, registerFastifyMetrics, registerFastifyTracing, WEBHOOK_TARGET_DEFAULTS, type ConfigBoard, type Logger, type ServiceName, type WebhookTargetSettings } from "@corridor/kit";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import Fastify, { LogController, type FastifyInstance, type onRequestHookHandler } from "fastify";
import type { Redis } from "ioredis";
import type { TSchema } from "typebox";
import { MemoryAuthCache, RedisAuthCache, assertRoutePermission, createAuthenticator, type AuthCache } from "./auth.js";
import { createServiceClients } from "./clients.js";
import { API_VERSION, clientErrorHandler, frameworkErrorHandler, installErrorHandling, requireHost } from "./errors.js";
import { MemoryIdempotencyRegistry, RedisIdempotencyRegistry, installIdempotency, type IdempotencyRegistry } from "./idempotency.js";
import { registerOpenApi } from "./openapi.js";
import { registerConsole } from "./console.js";
import { GATEWAY_DEFAULTS } from "./config.js";
import { AuthFailureThrottle, GuessThrottle, DEFAULT_AUTH_FAILURE_LIMIT, DEFAULT_RATE_LIMIT, MemoryFailureCounter, RedisFailureCounter, registerRateLimit } from "./rate-limit.js";
import { beneficialOwnerRoutes } from "./routes/beneficial-owners.js";
import { configRoutes } from "./routes/config.js";
import { WebhookPublicKeySchema, webhookPublicKeyRoutes } from "./routes/webhook-public-key.js";
import { customerRoutes } from "./routes/customers.js";
import { healthRoutes } from "./routes/health.js";
import { kycLinkRoutes, kycPageRoutes } from "./routes/kyc-links.js";
import { livenessPageRoutes } from "./routes/liveness-page.js";
import { contactVerificationRoutes } from "./routes/contact-verification.js";
import { documentRoutes } from "./routes/documents.js";
import { customerImportRoutes } from "./routes/customer-imports.js";
import { invitationRoutes } from "./routes/invitations.js";
import { sandboxRoutes } from "./routes/sandbox.js";
import { tokenRoutes } from "./routes/tokens.js";
import type { RouteDeps } from "./routes/types.js";
import { verificationRoutes } from "./routes/verifications.js";
import { beneficialOwnerSchemas } from "./schemas/beneficial-owners.js";
import { ErrorSchema } from "./schemas/common.js";
import { configSchemas } from "./schemas/config.js";
import { customerSchemas } from "./schemas/customers.js";
import { invitationSchemas } from "./schemas/invitations.js";
import { sandboxSchemas } from "./schemas/sandbox.js";
import { tokenSchemas } from "./schemas/tokens.js";
import { verificationSchemas } from "./schemas/verifications.js";
import { externalAccountRoutes } from "./routes/external-accounts.js";
import { externalAccountOwnershipRoutes } from "./routes/external-account-ownership.js";
import { internalAccountRoutes } from "./routes/internal-accounts.js";
import { sandboxMoneyRoutes } from "./routes/sandbox-money.js";
import { transactionRoutes } from "./routes/transactions.js";
import { discoveryRoutes } from "./routes/discoveries.js";
import { transferRoutes } from "./routes/transfers.js";
import { authCredentialRoutes } from "./routes/auth-credentials.js";
import { walletExportRoutes } from "./routes/wallet-export.js";
import { internalAccountUpdateRoutes } from "./routes/internal-account-update.js";
import { walletKeyRoutes } from "./routes/wallet-keys.js";
import { cardRoutes } from "./routes/cards.js";
import { externalAccountSchemas } from "./schemas/external-accounts.js";
import { internalAccountSchemas } from "./schemas/internal-accounts.js";
import { sandboxMoneySchemas } from "./schemas/sandbox-money.js";
import { transactionSchemas } from "./schemas/transactions.js";
import { BODY_LIMIT_BYTES, installValidators } from "./validation.js";
import { LazyCompilers } from "./lazy-compile.js";
import { exchangeRateRoutes } from "./routes/exchange-rates.js";
import { receiverRoutes } from "./routes/receivers.js";
import { quoteRoutes } from "./routes/quotes.js";
import { scaFactorRoutes, scaRoutes } from "./routes/sca.js";
import { sandboxQuoteRoutes } from "./routes/sandbox-quotes.js";
import { incomingPaymentRoutes } from "./routes/incoming-payments.js";
import { cryptoRoutes } from "./routes/crypto.js";
import { agentRoutes } from "./routes/agents.js";
import { agentMeRoutes } from "./routes/agents-me.js";
import { agentSchemas } from "./schemas/agents.js";
import { eventRoutes } from "./routes/events.js";
import { eventSchemas } from "./schemas/events.js";

export { API_VERSION } from "./errors.js";
export type { Principal, PlatformPrincipal, AgentPrincipal, AuthScheme } from "./auth.js";

export interface GatewayOptions {
  /** Connect transport to each service: in memory when embedded, h2c otherwise. */
  transportFor: (service: ServiceName) => Transport;
  log: Logger;
  /** Rate-limit counters, the auth cache and Idempotency-Key claims live in Redis when set (shared by replicas), in-process otherwise. */
  redisUrl?: string;
  /** Requests per authenticated principal (API token or agent), per IP on routes without auth. Defaults: config.ts. */
  rateLimit?: { max: number; timeWindowMs: number };
  /** Failed authentications per (IP, claimed clientId) before they answer 429; a correct secret always passes. Defaults: config.ts. */
  authFailureLimit?: { max: number; timeWindowMs: number };
  /** How long a verified credential is trusted without asking auth-sessions (ms). Default: config.ts. */
  authCacheTtlMs?: number;
  /** Trust X-Forwarded-* from a proxy in front (for client IPs). Default: config.ts. */
  trustProxy?: boolean;
  /** How long a client may take to send a request's headers, and the whole request (ms). Defaults: config.ts. */
  httpTimeouts?: { headersMs: number; requestMs: number };
  /** How long a gateway-recorded Idempotency-Key stays with a request that has not answered (ms). Default: config.ts. */
  idempotencyLeaseMs?: number;
  /** The operator's webhook-target settings (PATCH /config's webhookEndpoint check). Default: the kit's webhookTargetEnv. */
  webhookTargets?: WebhookTargetSettings;
  /**
   * The platform-config board (kit clients/config-board.ts) GET /config trusts its copies against;
   * default: one over the gateway's Redis when redisUrl is set, none otherwise (every GET asks
   * auth-sessions). Embedded mode passes the one its services share.
   */
  configBoard?: ConfigBoard;
  /** The operator's end-user terms (GET /customers/end-user-terms); none: that route answers 501. Default: config.ts. */
  endUserTerms?: { url: string; version: string };
  /** The operator's VASP directory (GET /vasps), sorted by name. Default: none (an empty directory). */
  vasps?: readonly { vaspName: string; url: string }[];
  /** True once the process is draining: /readyz answers 503 so the load balancer stops sending. */
  isDraining?: () => boolean;
}

/** Named schemas ($ref targets) shared by routes and listed in the OpenAPI components. */
export const SHARED_SCHEMAS: TSchema[] = [
  ErrorSchema,
  ...tokenSchemas,
  ...configSchemas,
  WebhookPublicKeySchema,
  ...sandboxSchemas,
  ...internalAccountSchemas,
  ...externalAccountSchemas,
  ...transactionSchemas,
  ...sandboxMoneySchemas,
  ...customerSchemas,
  ...verificationSchemas,
  ...beneficialOwnerSchemas,
  ...invitationSchemas,
  ...agentSchemas,
  ...eventSchemas,
];

export async function buildGateway(opts: GatewayOptions): Promise<FastifyInstance> {
  // ioredis is loaded only when Redis is configured (embedded mode keeps this state in process).
  const redis: Redis | undefined = opts.redisUrl ? new (await import("ioredis")).Redis(opts.redisUrl, { maxRetriesPerRequest: 1, connectTimeout: 2_000, enableAutoPipelining: true }) : undefined;
  redis?.on("error", (err) => opts.log.warn({ err }, "redis error"));

  // Route validators and serializers are compiled on first use, not at ready (lazy-compile.ts).
  const compilers = new LazyCompilers();
  const app = Fastify({
    loggerInstance: opts.log,
    schemaController: { compilersFactory: { buildSerializer: compilers.serializerFactory() } },
    trustProxy: opts.trustProxy ?? GATEWAY_DEFAULTS.TRUST_PROXY,
    // Slow clients are cut off on purpose (docs/architecture.md, "Bounded work per request"): the
    // headers within HTTP_HEADERS_TIMEOUT_MS, the whole request within HTTP_REQUEST_TIMEOUT_MS
    // (Fastify's own default is no limit), each answered 408 in the error shape (clientErrorHandler).
    requestTimeout: opts.httpTimeouts?.requestMs ?? GATEWAY_DEFAULTS.HTTP_REQUEST_TIMEOUT_MS,
    // Node answers a request without Host with a bare 400 and no body; the gateway answers it
    // itself, in the error shape (requireHost below).
    http: { headersTimeout: opts.httpTimeouts?.headersMs ?? GATEWAY_DEFAULTS.HTTP_HEADERS_TIMEOUT_MS, requireHostHeader: false },
    bodyLimit: BODY_LIMIT_BYTES,
    exposeHeadRoutes: false,
    // Every request gets an id of ours, on each of its log lines (request_id) and answered in the
    // Request-Id header (404s and errors included), so a platform can quote it to an operator.
    genReqId: () => newId("Request"),
    logController: new LogController({ requestIdLogLabel: "request_id" }),
    // Router and HTTP-parser errors (bad URL, long params, oversized headers) in the error shape too.
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler,
  }) as unknown as FastifyInstance;
  app.addHook("onRequest", async (request, reply) => {
    reply.header("request-id", request.id);
    requireHost(request);
  });

  // First, before any other hook: every request becomes a SERVER span, active for the Connect calls it makes.
  registerFastifyTracing(app);
  registerFastifyMetrics(app);
  installErrorHandling(app, opts.log);
  compilers.attach(app);
  installValidators(app, SHARED_SCHEMAS, compilers);

  const clients = createServiceClients(opts.transportFor);
  const cache: AuthCache = redis ? new RedisAuthCache(redis) : new MemoryAuthCache();
  const auth = createAuthenticator({ authClient: clients.authSessions, agentsClient: clients.agents, cache, ttlMs: opts.authCacheTtlMs ?? GATEWAY_DEFAULTS.AUTH_CACHE_TTL_MS, log: opts.log });
  const failureCounter = redis ? new RedisFailureCounter(redis) : new MemoryFailureCounter();
  const authFailureLimit = opts.authFailureLimit ?? DEFAULT_AUTH_FAILURE_LIMIT;
  const platformConfig = boardedCopies({
    board: opts.configBoard ?? (redis ? redisConfigBoard(redis) : undefined),
    fetch: async (platformId: string) => (await clients.authSessions.getPlatformConfig({ platformId })).config,
    versionOf: (c) => (c?.updatedAt ? configVersion(timestampDate(c.updatedAt)) : undefined),
  });
  const deps: RouteDeps = {
    clients,
    auth,
    guesses: new GuessThrottle(failureCounter, authFailureLimit, opts.log),
    platformConfig,
    webhookTargets: opts.webhookTargets ?? WEBHOOK_TARGET_DEFAULTS,
    endUserTerms: opts.endUserTerms,
    vasps: opts.vasps ?? [],
  };

  app.addHook("onRoute", assertRoutePermission);
  // Authentication (a route-level onRequest hook; it reads the route's final config at request
  // time, `auth: "none"` routes skip it), its failures throttled per (IP, claimed clientId); then
  // the request limit (preParsing), keyed on the authenticated principal (decisions §2).
  await registerRateLimit(app, opts.rateLimit ?? DEFAULT_RATE_LIMIT, redis);
  const failures = new AuthFailureThrottle(failureCounter, authFailureLimit, opts.log);
  const authHook: onRequestHookHandler = async (request, reply) => failures.guard(request, reply, () => auth.hook(request));
  app.addHook("onRoute", (route) => {
    const existing = route.onRequest;
    route.onRequest = [...(existing === undefined ? [] : Array.isArray(existing) ? existing : [existing]), authHook];
  });
  // Idempotency-Key is scoped to (platform, key) across every route (decisions §3).
  const idempotency: IdempotencyRegistry = redis ? new RedisIdempotencyRegistry(redis) : new MemoryIdempotencyRegistry();
  installIdempotency(app, idempotency, opts.log, { leaseMs: opts.idempotencyLeaseMs ?? GATEWAY_DEFAULTS.IDEMPOTENCY_LEASE_MS });

  await registerOpenApi(app);
  await registerConsole(app, opts.log);
  healthRoutes(app, opts.transportFor, opts.isDraining);
  await kycPageRoutes(app, clients);
  await livenessPageRoutes(app, clients);
  await app.register(
    async (api) => {
      const typed = api.withTypeProvider<TypeBoxTypeProvider>();
      tokenRoutes(typed, deps);
      configRoutes(typed, deps);
      webhookPublicKeyRoutes(typed, deps);
      sandboxRoutes(typed, deps);
      internalAccountRoutes(typed, deps);
      externalAccountRoutes(typed, deps);
      externalAccountOwnershipRoutes(typed, deps);
      transferRoutes(typed, deps);
      transactionRoutes(typed, deps);
      discoveryRoutes(typed, deps);
      sandboxMoneyRoutes(typed, deps);
      customerRoutes(typed, deps);
      kycLinkRoutes(typed, deps);
      contactVerificationRoutes(typed, deps);
      verificationRoutes(typed, deps);
      documentRoutes(typed, deps);
      customerImportRoutes(typed, deps);
      beneficialOwnerRoutes(typed, deps);
      invitationRoutes(typed, deps);
      authCredentialRoutes(typed, deps);
      walletExportRoutes(typed, deps);
      internalAccountUpdateRoutes(typed, deps);
      walletKeyRoutes(typed, deps);
      cardRoutes(typed, deps);
      exchangeRateRoutes(typed, deps);
      receiverRoutes(typed, deps);
      quoteRoutes(typed, deps);
      scaRoutes(typed, deps);
      scaFactorRoutes(typed, deps);
      sandboxQuoteRoutes(typed, deps);
      incomingPaymentRoutes(typed, deps);
      cryptoRoutes(typed, deps);
      agentRoutes(typed, deps);
      agentMeRoutes(typed, deps);
      eventRoutes(typed, deps);
    },
    { prefix: `/${API_VERSION}` },
  );

  app.addHook("onClose", async () => {
    await cache.close();
    await idempotency.close();
    if (redis) await redis.quit().catch(() => redis.disconnect());
  });
  await app.ready();
  return app;
}
