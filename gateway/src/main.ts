// Composition root of the gateway in split and cluster modes: services are reached over Connect
// (gRPC over h2c) at CORRIDOR_<SERVICE>_URL; rate limits and the auth cache live in Redis when
// REDIS_URL is set.
import type { Transport } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import {
  DEFAULT_SERVICE_PORTS,
  SERVICE_NAMES,
  createLogger,
  env,
  loadConfig,
  serviceUrlEnvKey,
  startTelemetry,
  tracingClientInterceptor,
  z,
  type ServiceName,
} from "@corridor/kit";
import { buildGateway } from "./app.js";

const config = loadConfig(
  z.object({
    /** Port of the REST API. */
    PORT: env.port(8080),
    /** Interface to listen on. */
    HOST: z.string().default("0.0.0.0"),
    /** Redis for shared rate-limit counters and auth cache; in-process when unset (single replica only). */
    REDIS_URL: z.string().optional(),
    /** Requests allowed per credential (or per IP without one) per window. */
    RATE_LIMIT_MAX: z.coerce.number().int().min(1).default(600),
    /** Rate-limit window in milliseconds. */
    RATE_LIMIT_WINDOW_MS: z.coerce.number().int().min(1).default(60_000),
    /** How long a verified credential is trusted without asking auth-sessions. */
    AUTH_CACHE_TTL_MS: z.coerce.number().int().min(0).default(30_000),
    /** Trust X-Forwarded-For from the ingress in front, for per-IP limits. */
    TRUST_PROXY: env.bool(false),
    /**
     * After SIGTERM, how long to keep serving (with /readyz failing) before closing, so the load
     * balancer stops routing here first. 0 locally; the Helm chart sets a few seconds.
     */
    SHUTDOWN_DRAIN_DELAY_MS: env.int(0),
    /** Where each service answers (Connect over h2c). */
    ...Object.fromEntries(SERVICE_NAMES.map((s) => [serviceUrlEnvKey(s), z.string().url().default(`http://127.0.0.1:${DEFAULT_SERVICE_PORTS[s]}`)])),
  }),
);

const telemetry = startTelemetry({ serviceName: "gateway" });
const log = createLogger("gateway");
const urls = config as unknown as Record<string, string>;
const transports = new Map<ServiceName, Transport>(
  SERVICE_NAMES.map((s) => [s, createGrpcTransport({ baseUrl: urls[serviceUrlEnvKey(s)]!, interceptors: [tracingClientInterceptor()] })]),
);

let closing = false;
const app = await buildGateway({
  transportFor: (s) => transports.get(s)!,
  log,
  redisUrl: config.REDIS_URL,
  rateLimit: { max: config.RATE_LIMIT_MAX, timeWindowMs: config.RATE_LIMIT_WINDOW_MS },
  authCacheTtlMs: config.AUTH_CACHE_TTL_MS,
  trustProxy: config.TRUST_PROXY,
  isDraining: () => closing,
});
await app.listen({ host: config.HOST, port: config.PORT });

for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.on(signal, () => {
    if (closing) return;
    closing = true;
    log.info({ signal, delayMs: config.SHUTDOWN_DRAIN_DELAY_MS }, "draining");
    new Promise((resolve) => setTimeout(resolve, config.SHUTDOWN_DRAIN_DELAY_MS))
      .then(() => app.close())
      .then(() => telemetry.shutdown())
      .then(
        () => process.exit(0),
        (err: unknown) => {
          log.error({ err }, "close failed");
          process.exit(1);
        },
      );
  });
}
