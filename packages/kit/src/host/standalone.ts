import type { Transport } from "@connectrpc/connect";
import { createBus, kafkaTopicPartitionsGrowSetting, kafkaTopicPartitionsSetting } from "../bus/index.js";
import { openRedisConfigBoard } from "../clients/config-board.js";
import { systemClock } from "../clock.js";
import { env, loadConfig, z } from "../config.js";
import { databaseConnectTimeoutSetting, databasePreparedStatementsSetting, databaseSchemaSearchPathSetting, migrateSchema, openDatabase, sql, type DatabaseHandle } from "../db/index.js";
import { databaseStartupWaitSetting, untilDatabaseAnswers } from "../db/startup-wait.js";
import { createLogger, type Logger } from "../log.js";
import type { ServiceModule, ServiceName, TransportFor } from "../service.js";
import { metricsPortSetting, observeDatabasePool, startMetrics, startTelemetry, tracingClientInterceptor, tracingServerInterceptor } from "../telemetry/index.js";
import { serveConnect } from "./connect-server.js";
import { createServiceTransport } from "./grpc-transport.js";
import { appErrorInterceptor } from "./errors.js";
import { HealthState } from "./health.js";
import { DEFAULT_SERVICE_PORTS, serviceUrl, serviceUrlSettings } from "./ports.js";
import { startService } from "./runtime.js";

const standaloneConfig = (service: ServiceName) =>
  z.object({
    /** Port of the service's h2c Connect/gRPC server. */
    PORT: env.port(DEFAULT_SERVICE_PORTS[service]),
    /** Interface to listen on. */
    HOST: z.string().default("0.0.0.0"),
    /** Postgres URL; without it the service keeps its data in PGlite under CORRIDOR_DATA_DIR. */
    DATABASE_URL: z.string().optional(),
    /** PGlite data folder when DATABASE_URL is not set. */
    CORRIDOR_DATA_DIR: z.string().default(`./.data/${service}`),
    /** Postgres pool size of this process. */
    DATABASE_POOL_SIZE: env.int(10),
    /** Parameterised queries as named prepared statements (off behind a pooler that cannot keep them). */
    DATABASE_PREPARED_STATEMENTS: databasePreparedStatementsSetting,
    /** Opening a Postgres connection fails after this long (the request answers 503 instead of hanging). */
    DATABASE_CONNECT_TIMEOUT_MS: databaseConnectTimeoutSetting,
    /** At start, keep trying a database that is unreachable or refuses connections this long before exiting. */
    DATABASE_STARTUP_WAIT_MS: databaseStartupWaitSetting,
    /** The pool's connections start on the service schema's search_path: queries unqualified (off behind a pooler that does not keep it). */
    DATABASE_SCHEMA_SEARCH_PATH: databaseSchemaSearchPathSetting,
    /**
     * Redis for the platform-config board (ServiceDeps.configBoard), the same one the gateway uses;
     * without it every config read asks auth-sessions (and so does every reader while
     * auth-sessions has none: only auth-sessions writes the board).
     */
    REDIS_URL: z.string().optional(),
    /** Comma-separated Kafka brokers; without them events stay in this process (only useful alone). */
    KAFKA_BROKERS: env.list(),
    /** Prefix for every topic name, so several stacks can share one broker. */
    KAFKA_TOPIC_PREFIX: z.string().default(""),
    /** Partitions of the topics this service creates (docs/events.md, "Topics"). */
    KAFKA_TOPIC_PARTITIONS: kafkaTopicPartitionsSetting,
    /** Add partitions to an existing topic that has fewer than KAFKA_TOPIC_PARTITIONS (default: only warn). */
    KAFKA_TOPIC_PARTITIONS_GROW: kafkaTopicPartitionsGrowSetting,
    /** Replication factor of a topic this process creates (1: a single broker; 3 in production). */
    KAFKA_TOPIC_REPLICATION_FACTOR: env.int(1).pipe(z.number().int().min(1)),
    /** How long SIGTERM waits for in-flight work before exiting. */
    SHUTDOWN_GRACE_MS: env.int(10_000),
    /**
     * After SIGTERM, how long to keep serving (health NOT_SERVING) before closing the listener, so
     * the cluster stops routing new connections here first. 0 locally; the Helm chart sets a few
     * seconds. Not counted in SHUTDOWN_GRACE_MS.
     */
    SHUTDOWN_DRAIN_DELAY_MS: env.int(0),
    /** Port of the Prometheus scrape endpoint `/metrics`; unset = none (docs/operations.md, "Metrics"). */
    METRICS_PORT: metricsPortSetting,
    /**
     * Recycle client connections older than this (GOAWAY), so callers that reach the replicas through
     * one address balanced per connection (a Kubernetes Service) spread over them; 0 = never.
     */
    CONNECT_MAX_CONNECTION_AGE_MS: env.int(0),
    /** Where each other service answers (Connect over h2c): one base URL, or its replicas' comma-separated. */
    ...serviceUrlSettings(),
    /**
     * Run this service's migrations and exit (0 once its schema is up to date): the Helm chart's
     * pre-install/pre-upgrade Job. Needs only the database.
     */
    CORRIDOR_MIGRATE_ONLY: env.bool(false),
    /**
     * Migrate the schema at start (the default). false: only check that every migration this code
     * knows has run, and refuse to start otherwise (the chart sets it when its Job migrates).
     */
    CORRIDOR_MIGRATE_ON_START: env.bool(true),
  });

/**
 * Composition root of one service in split or cluster mode: config from the environment, its own
 * database pool, Kafka, Connect clients to the other services over h2c, and an h2c server with
 * grpc.health.v1. Drains on SIGTERM/SIGINT.
 */
export async function runStandalone(module: ServiceModule): Promise<void> {
  const config = loadConfig(standaloneConfig(module.name));
  if (config.CORRIDOR_MIGRATE_ONLY) return migrateOnly(module, config);
  const telemetry = startTelemetry({ serviceName: module.name });
  const log = createLogger(module.name);
  // Before anything that records: instruments created earlier would stay no-ops.
  const metrics = await startMetrics({ serviceName: module.name, port: config.METRICS_PORT, host: config.HOST, env: process.env });

  const db = await databaseAtStart(log, config.DATABASE_STARTUP_WAIT_MS, () =>
    openDatabase({
      databaseUrl: config.DATABASE_URL,
      dataDir: config.DATABASE_URL ? undefined : config.CORRIDOR_DATA_DIR,
      poolSize: config.DATABASE_POOL_SIZE,
      preparedStatements: config.DATABASE_PREPARED_STATEMENTS,
      connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS,
      // This process's pool serves its own schema only (other schemas, if ever asked, stay qualified).
      ...(config.DATABASE_SCHEMA_SEARCH_PATH ? { searchPathSchema: module.schema } : {}),
      onIdleError: (err) => log.warn({ err }, "a database connection failed; the pool replaces it"),
    }),
  );
  if (db.poolStats) observeDatabasePool(module.name, db.poolStats);
  const bus = await createBus({
    kafkaBrokers: config.KAFKA_BROKERS.length > 0 ? config.KAFKA_BROKERS : undefined,
    clientId: module.name,
    topicPrefix: config.KAFKA_TOPIC_PREFIX,
    numPartitions: config.KAFKA_TOPIC_PARTITIONS,
    replicationFactor: config.KAFKA_TOPIC_REPLICATION_FACTOR,
    growPartitions: config.KAFKA_TOPIC_PARTITIONS_GROW,
    log,
    // Fail fast: a process whose consumer is gone would serve requests while its events pile up.
    onConsumerStopped: (group) => {
      log.fatal({ group }, "a Kafka consumer stopped for good; exiting so the supervisor restarts this service");
      process.exit(1);
    },
  });

  const configBoard = config.REDIS_URL ? await openRedisConfigBoard(config.REDIS_URL, (err) => log.warn({ err }, "redis error")) : undefined;

  const transports = new Map<ServiceName, Transport>();
  const transportFor: TransportFor = (service) => {
    let t = transports.get(service);
    if (!t) {
      t = createServiceTransport({ baseUrl: serviceUrl(service, config), interceptors: [tracingClientInterceptor()] });
      transports.set(service, t);
    }
    return t;
  };

  const running = await startService(module, { db, bus, clock: systemClock, log, transportFor, env: process.env, configBoard }, { migrate: config.CORRIDOR_MIGRATE_ON_START });
  // Readiness follows the database: NOT_SERVING while it is unreachable, SERVING again by itself
  // within a probe period of its return (the pool opens new connections on the next query).
  const health = new HealthState({ probe: () => sql`select 1`.execute(db.root) });
  const server = await serveConnect({
    routes: (router) => {
      health.routes(router);
      running.built.routes(router);
    },
    interceptors: [tracingServerInterceptor(), appErrorInterceptor],
    port: config.PORT,
    host: config.HOST,
    maxConnectionAgeMs: config.CONNECT_MAX_CONNECTION_AGE_MS,
  });
  log.info({ port: server.port, metricsPort: metrics.port, database: db.kind, bus: bus.kind }, `${module.name} listening`);

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal, delayMs: config.SHUTDOWN_DRAIN_DELAY_MS }, "draining");
    health.setServing(false);
    await new Promise((resolve) => setTimeout(resolve, config.SHUTDOWN_DRAIN_DELAY_MS));
    const timer = setTimeout(() => {
      log.error("drain timed out; exiting");
      process.exit(1);
    }, config.SHUTDOWN_GRACE_MS);
    timer.unref();
    await server.close();
    await running.stop();
    await bus.close();
    await configBoard?.close();
    await db.close();
    await metrics.shutdown();
    await telemetry.shutdown();
    process.exit(0);
  };
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));
}

/**
 * CORRIDOR_MIGRATE_ONLY: the service's schema brought up to date (the kit's tables and the
 * service's migrations), then the process exits 0; any failure exits 1 with the error logged. No
 * Kafka, Redis, telemetry or listener: a migrations Job needs only the database.
 */
async function migrateOnly(
  module: ServiceModule,
  config: { DATABASE_URL?: string; CORRIDOR_DATA_DIR: string; DATABASE_PREPARED_STATEMENTS: boolean; DATABASE_CONNECT_TIMEOUT_MS: number; DATABASE_STARTUP_WAIT_MS: number },
): Promise<void> {
  const log = createLogger(module.name);
  const started = Date.now();
  try {
    const db = await databaseAtStart(log, config.DATABASE_STARTUP_WAIT_MS, () =>
      openDatabase({
        databaseUrl: config.DATABASE_URL,
        dataDir: config.DATABASE_URL ? undefined : config.CORRIDOR_DATA_DIR,
        poolSize: 1,
        preparedStatements: config.DATABASE_PREPARED_STATEMENTS,
        connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS,
      }),
    );
    try {
      await migrateSchema(db, module.schema, module.migrationsDir);
    } finally {
      await db.close();
    }
    log.info({ schema: module.schema, ms: Date.now() - started }, "migrations done (CORRIDOR_MIGRATE_ONLY); exiting");
    process.exit(0);
  } catch (err) {
    log.fatal({ err, schema: module.schema }, "migrations failed (CORRIDOR_MIGRATE_ONLY)");
    process.exit(1);
  }
}

/**
 * The database opened at start and answering a query, tried again while it is unreachable or
 * refuses connections (DATABASE_STARTUP_WAIT_MS): a replica restarted while its PostgreSQL is out of
 * connections or restarting waits for it rather than crash-looping until its supervisor gives up.
 */
async function databaseAtStart(log: Logger, waitMs: number, open: () => Promise<DatabaseHandle>): Promise<DatabaseHandle> {
  const onRetry = (err: unknown, attempt: number, delayMs: number) =>
    log.warn({ reason: (err as Error)?.message, attempt, delayMs }, "the database does not answer yet (unreachable, or refusing connections); trying again");
  const db = await untilDatabaseAnswers(open, { waitMs, onRetry });
  try {
    await untilDatabaseAnswers(() => sql`select 1`.execute(db.root), { waitMs, onRetry });
  } catch (err) {
    await db.close().catch(() => undefined);
    throw err;
  }
  return db;
}
