import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { gatewayTuning } from "@corridor/gateway/config";
import { createProcessLogger, loadConfig, startMetrics, startTelemetry } from "@corridor/kit";
import { banner, ensureSandboxPlatform } from "./bootstrap.js";
import { embeddedConfigSchema } from "./config.js";
import { startEmbedded } from "./system.js";

const config = loadConfig(embeddedConfigSchema);

const telemetry = startTelemetry({ serviceName: "corridor" });
const log = createProcessLogger("corridor");
// Before the system: instruments created earlier would stay no-ops.
const metrics = await startMetrics({ serviceName: "corridor", port: config.METRICS_PORT, host: config.CORRIDOR_HTTP_HOST, env: process.env });
const dataDir = resolve(config.CORRIDOR_DATA_DIR);
// The build's PGlite data folder with every migration applied (prepare-data.ts): a new data dir
// starts from it instead of running initdb. Beside corridor.mjs in dist/app; absent under tsx.
const pgliteTemplate = fileURLToPath(new URL("../../pglite-template.tar.gz", import.meta.url));

const system = await startEmbedded({
  log,
  databaseUrl: config.DATABASE_URL,
  preparedStatements: config.DATABASE_PREPARED_STATEMENTS,
  connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS,
  dataDir,
  pgliteTemplate,
  redisUrl: config.REDIS_URL,
  kafkaBrokers: config.KAFKA_BROKERS,
  kafkaTopicPrefix: config.KAFKA_TOPIC_PREFIX,
  kafkaTopicPartitions: config.KAFKA_TOPIC_PARTITIONS,
  kafkaTopicPartitionsGrow: config.KAFKA_TOPIC_PARTITIONS_GROW,
  onConsumerStopped: (group) => {
    log.fatal({ group }, "a Kafka consumer stopped for good; exiting so the supervisor restarts Corridor");
    process.exit(1);
  },
  httpHost: config.CORRIDOR_HTTP_HOST,
  httpPort: config.CORRIDOR_HTTP_PORT,
  internalPort: config.CORRIDOR_INTERNAL_PORT,
  gateway: gatewayTuning(config),
});

const creds = await ensureSandboxPlatform({
  transport: system.transportFor("auth-sessions"),
  credentialsFile: join(dataDir, "sandbox-credentials.json"),
  clientId: config.CORRIDOR_BOOTSTRAP_CLIENT_ID,
  clientSecret: config.CORRIDOR_BOOTSTRAP_CLIENT_SECRET,
});
process.stdout.write(
  banner({
    mode: "embedded",
    url: system.url,
    creds,
    extra: [
      "",
      `Data: ${config.DATABASE_URL ? "Postgres (DATABASE_URL)" : dataDir}; operator CLI: npm run admin -- --url ${system.internalUrl ?? "<internal url>"} platform list`,
    ],
  }),
);

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  log.info({ signal }, "shutting down");
  await system.stop();
  await metrics.shutdown();
  await telemetry.shutdown();
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));
