import {
  HealthState,
  appErrorInterceptor,
  createBus,
  createLogger,
  databasePreparedStatementsSetting,
  databaseSchemaSearchPathSetting,
  env,
  kafkaTopicPartitionsSetting,
  loadConfig,
  openDatabase,
  serveConnect,
  startTelemetry,
  systemClock,
  tracingServerInterceptor,
  z,
} from "@corridor/kit";
import { startConnector, type ConnectorDefinition } from "./runtime.js";
import { ConnectorAdminService, createConnectorAdminHandler } from "./admin.js";

/** The host settings of a connector process (its own settings are its definition's schema). */
const hostConfig = z.object({
  /** Port of the process's h2c server: grpc.health.v1 and the operator's ConnectorAdminService (internal: never exposed through the gateway). */
  PORT: env.port(8110),
  /** Interface to listen on. */
  HOST: z.string().default("0.0.0.0"),
  /** Postgres URL; without it the connector keeps its data in PGlite under CORRIDOR_DATA_DIR. */
  DATABASE_URL: z.string().optional(),
  /** PGlite data folder when DATABASE_URL is not set. */
  CORRIDOR_DATA_DIR: z.string().default("./.data/connector"),
  /** Postgres pool size of this process. */
  DATABASE_POOL_SIZE: env.int(5),
  /** Parameterised queries as named prepared statements (off behind a pooler that cannot keep them). */
  DATABASE_PREPARED_STATEMENTS: databasePreparedStatementsSetting,
  /** The pool's connections start on the connector schema's search_path: queries unqualified (off behind a pooler that does not keep it). */
  DATABASE_SCHEMA_SEARCH_PATH: databaseSchemaSearchPathSetting,
  /** Comma-separated Kafka brokers: where the ledger's instructions arrive and outcomes go. */
  KAFKA_BROKERS: env.list(),
  /** Prefix for every topic name, as the rest of the deployment uses. */
  KAFKA_TOPIC_PREFIX: z.string().default(""),
  /** Partitions of a topic this process creates because it is missing: the kit's one definition, as the services read it (docs/events.md, "Topics"). */
  KAFKA_TOPIC_PARTITIONS: kafkaTopicPartitionsSetting,
  /** Replication factor of a topic this process creates (docs/operations.md, "Kafka topics"). */
  KAFKA_TOPIC_REPLICATION_FACTOR: env.int(1).pipe(z.number().int().min(1)),
  /** How long SIGTERM waits for in-flight work before exiting. */
  SHUTDOWN_GRACE_MS: env.int(10_000),
});

/**
 * Composition root of a connector deployable (connectors/<name>/src/main.ts:
 * `await runConnector(definition)`): its own database pool and schema, Kafka, a health endpoint,
 * drained on SIGTERM/SIGINT. Without KAFKA_BROKERS instructions could never reach it: it refuses to start.
 */
export async function runConnector<S extends z.ZodObject>(def: ConnectorDefinition<S>): Promise<void> {
  const config = loadConfig(hostConfig);
  if (config.KAFKA_BROKERS.length === 0) throw new Error(`connector ${def.name} needs KAFKA_BROKERS (the ledger's instructions arrive on Kafka)`);
  const telemetry = startTelemetry({ serviceName: def.name });
  const log = createLogger(def.name);
  const db = await openDatabase({
    databaseUrl: config.DATABASE_URL,
    dataDir: config.DATABASE_URL ? undefined : config.CORRIDOR_DATA_DIR,
    poolSize: config.DATABASE_POOL_SIZE,
    preparedStatements: config.DATABASE_PREPARED_STATEMENTS,
    // The connector's standalone database serves its own schema only.
    ...(config.DATABASE_SCHEMA_SEARCH_PATH ? { searchPathSchema: def.schema } : {}),
    onIdleError: (err) => log.warn({ err }, "an idle database connection failed; the pool replaces it"),
  });
  const bus = await createBus({
    kafkaBrokers: config.KAFKA_BROKERS,
    clientId: def.name,
    topicPrefix: config.KAFKA_TOPIC_PREFIX,
    numPartitions: config.KAFKA_TOPIC_PARTITIONS,
    replicationFactor: config.KAFKA_TOPIC_REPLICATION_FACTOR,
    log,
    onConsumerStopped: (group) => {
      log.fatal({ group }, "a Kafka consumer stopped for good; exiting so the supervisor restarts this connector");
      process.exit(1);
    },
  });
  const running = await startConnector(def, { db, bus, clock: systemClock, log, env: process.env });
  const health = new HealthState();
  const server = await serveConnect({ routes: (router) => {
      health.routes(router);
      if (running.admin) router.service(ConnectorAdminService, createConnectorAdminHandler(def.name, running.admin));
    }, interceptors: [tracingServerInterceptor(), appErrorInterceptor], port: config.PORT, host: config.HOST });
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, "draining");
    health.setServing(false);
    const timer = setTimeout(() => {
      log.error("drain timed out; exiting");
      process.exit(1);
    }, config.SHUTDOWN_GRACE_MS);
    timer.unref();
    await server.close();
    await running.stop();
    await bus.close();
    await db.close();
    await telemetry.shutdown();
    process.exit(0);
  };
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));
  // Said once the signal handlers are in place: a supervisor that stops the process after this line is drained, never killed.
  log.info({ port: server.port, database: db.kind }, `connector ${def.name} running`);
}
