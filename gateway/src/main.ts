// Composition root of the gateway in split and cluster modes: services are reached over Connect
// (gRPC over h2c) at CORRIDOR_<SERVICE>_URL; rate limits and the auth cache live in Redis when
// REDIS_URL is set.
import type { Transport } from "@connectrpc/connect";
import { SERVICE_NAMES, createLogger, createServiceTransport, loadConfig, serviceUrlEnvKey, startMetrics, startTelemetry, tracingClientInterceptor, type ServiceName } from "@corridor/kit";
import { buildGateway } from "./app.js";
import { gatewayTuning, splitGatewayConfigSchema } from "./config.js";

const config = loadConfig(splitGatewayConfigSchema);

const telemetry = startTelemetry({ serviceName: "gateway" });
const log = createLogger("gateway");
// Before the transports and the app: instruments created earlier would stay no-ops.
const metrics = await startMetrics({ serviceName: "gateway", port: config.METRICS_PORT, host: config.HOST, env: process.env });
const urls = config as unknown as Record<string, string>;
const transports = new Map<ServiceName, Transport>(
  SERVICE_NAMES.map((s) => [s, createServiceTransport({ baseUrl: urls[serviceUrlEnvKey(s)]!, interceptors: [tracingClientInterceptor()] })]),
);

let closing = false;
const app = await buildGateway({
  transportFor: (s) => transports.get(s)!,
  log,
  redisUrl: config.REDIS_URL,
  ...gatewayTuning(config),
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
      .then(() => metrics.shutdown())
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
