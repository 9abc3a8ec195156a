import { join, resolve } from "node:path";
import { setFlagsFromString } from "node:v8";
import { fileURLToPath } from "node:url";
import { gatewayTuning } from "@corridor/gateway/config";
import { createProcessLogger, loadConfig, serviceLogger, startMetrics, startTelemetry, systemClock } from "@corridor/kit";
import { banner, ensureSandboxPlatform } from "./bootstrap.js";
import { embeddedConfigSchema } from "./config.js";
import { ConnectorSetupError, checkConnectorSettings, connectorDefinitions, startConnectors } from "./connectors.js";
import { startEmbedded } from "./system.js";

const config = loadConfig(embeddedConfigSchema);
// Before PGlite compiles its WebAssembly (startEmbedded): V8's baseline compiler only, unless
// CORRIDOR_PGLITE_OPTIMIZE (config.ts says what each costs). V8 reads the flag when it compiles a module.
if (!config.DATABASE_URL && !config.CORRIDOR_PGLITE_OPTIMIZE) setFlagsFromString("--liftoff-only");
// The rail connectors named in CORRIDOR_CONNECTORS, their settings checked before anything starts:
// one message lists every unknown name and every bad key.
const connectorDefs = await connectorDefinitions(config.CORRIDOR_CONNECTORS)
  .then((defs) => (checkConnectorSettings(defs, process.env), defs))
  .catch((err: unknown) => {
    if (!(err instanceof ConnectorSetupError)) throw err;
    process.stderr.write(`corridor: cannot start\n${err.message}\n`);
    process.exit(78);
  });

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

// In this process, on the embedded system's database and in-process bus (or its Kafka).
const connectors = await startConnectors(connectorDefs, { db: system.db, bus: system.bus, clock: systemClock, log: serviceLogger(log, "connectors"), env: process.env });
// Their ConnectorAdminService on the internal port, by name (docs/connectors.md, "Operating a connector").
system.connectors.attach(connectors.running);

// Signal handlers before the banner: a supervisor that stops the process once it says it runs gets a drain.
let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  log.info({ signal }, "shutting down");
  system.connectors.detach(connectors.running.map((c) => c.name));
  await connectors.stop();
  await system.stop();
  await metrics.shutdown();
  await telemetry.shutdown();
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));

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
      ...(connectorDefs.length > 0
        ? [`Rail connectors: ${connectorDefs.map((d) => d.name).join(", ")}; their files and suspense: npm run admin -- --url ${system.internalUrl ?? "<internal url>"} connector files list --connector <name>`]
        : []),
    ],
  }),
);

