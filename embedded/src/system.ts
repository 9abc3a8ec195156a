import type { AddressInfo } from "node:net";
import { createBus, memoryConfigBoard, observeDatabasePool, openDatabase, openRedisConfigBoard, serveConnect, serviceLogger, startInProcess, systemClock, type Bus, type Clock, type ConfigBoard, type DatabaseHandle, type Logger } from "@corridor/kit";
import { tracingServerInterceptor } from "@corridor/kit";
import { appErrorInterceptor } from "@corridor/kit";
import { ConnectorAdminService, createConnectorAdminRouter, type ConnectorAdminDirectory } from "@corridor/connector";
import type { GatewayTuning } from "@corridor/gateway/config";

export interface EmbeddedOptions {
  log: Logger;
  /** Postgres URL; PGlite in `dataDir` (or in memory) otherwise. */
  databaseUrl?: string;
  /** Parameterised queries on databaseUrl as named prepared statements. */
  preparedStatements?: boolean;
  /** DATABASE_URL: opening a connection fails after this long. */
  connectTimeoutMs?: number;
  dataDir?: string;
  /** A PGlite data folder tarball a new `dataDir` starts from (openDatabase's pgliteTemplate). */
  pgliteTemplate?: string;
  redisUrl?: string;
  kafkaBrokers?: string[];
  kafkaTopicPrefix?: string;
  /** KAFKA_TOPIC_PARTITIONS (createBus's numPartitions). */
  kafkaTopicPartitions?: number;
  /** KAFKA_TOPIC_PARTITIONS_GROW (createBus's growPartitions). */
  kafkaTopicPartitionsGrow?: boolean;
  /** With Kafka: a consumer kafkajs gave up on for good (the process should exit; see createBus). */
  onConsumerStopped?: (group: string, err: unknown) => void;
  httpHost: string;
  httpPort: number;
  /** Loopback port serving every service's Connect API and the in-process connectors' ConnectorAdminService (operator CLI); undefined disables it. */
  internalPort?: number;
  /** The gateway's knobs, as loaded from its config schema (@corridor/gateway/config); its defaults otherwise. */
  gateway?: Partial<GatewayTuning>;
  /** Shorthand for gateway.rateLimit (benchmarks lift it). */
  rateLimit?: { max: number; timeWindowMs: number };
  clock?: Clock;
}

export interface EmbeddedSystem {
  /** http://host:port (no version segment). */
  url: string;
  internalUrl?: string;
  transportFor: Awaited<ReturnType<typeof startInProcess>>["transportFor"];
  /** The process's bus and database, for what runs beside the services in this process (a rail connector: @corridor/connector startConnector). */
  bus: Bus;
  db: DatabaseHandle;
  /** The rail connectors running in this process, whose ConnectorAdminService the internal port serves (routed by connector name): attach them once started, detach them before they stop. */
  connectors: Pick<ConnectorAdminDirectory, "attach" | "detach">;
  stop(): Promise<void>;
}

/**
 * Composition root of embedded mode: one database handle shared by every service (each in its own
 * schema), one bus, in-memory Connect between services, the gateway on HTTP, and optionally every
 * service's Connect API on a loopback port for the operator CLI.
 */
export async function startEmbedded(opts: EmbeddedOptions): Promise<EmbeddedSystem> {
  // The services' and the gateway's code (most of what this process loads) is imported while the
  // database opens, not before: PGlite compiles its WebAssembly on other threads and the main
  // thread would otherwise wait for them (issue 28, item 4: a warm `npm start` in 3 s).
  const database = openDatabase({
    databaseUrl: opts.databaseUrl,
    dataDir: opts.databaseUrl ? undefined : opts.dataDir,
    pgliteTemplate: opts.pgliteTemplate,
    preparedStatements: opts.preparedStatements,
    connectTimeoutMs: opts.connectTimeoutMs,
    onIdleError: (err) => opts.log.warn({ err }, "a database connection failed; the pool replaces it"),
  });
  const code = Promise.all([import("./modules.js"), import("@corridor/gateway")]);
  // Awaited below, after the database: a failure to load is then reported, not left unhandled.
  code.catch(() => undefined);
  const db = await database;
  const [{ allServices }, { buildGateway }] = await code;
  if (db.poolStats) observeDatabasePool("corridor", db.poolStats);
  const bus = await createBus({
    kafkaBrokers: opts.kafkaBrokers?.length ? opts.kafkaBrokers : undefined,
    clientId: "corridor",
    topicPrefix: opts.kafkaTopicPrefix,
    numPartitions: opts.kafkaTopicPartitions,
    growPartitions: opts.kafkaTopicPartitionsGrow,
    log: opts.log,
    onConsumerStopped: opts.onConsumerStopped,
  });
  // The platform-config board (kit clients/config-board.ts): in Redis when there is one, since other
  // processes may share this database; in memory otherwise, where this process is the only reader.
  const redisBoard = opts.redisUrl ? await openRedisConfigBoard(opts.redisUrl, (err) => opts.log.warn({ err }, "redis error")) : undefined;
  const configBoard: ConfigBoard = redisBoard ?? memoryConfigBoard();
  const system = await startInProcess({ modules: allServices, db, bus, clock: opts.clock ?? systemClock, log: opts.log, configBoard });

  const gateway = await buildGateway({
    transportFor: system.transportFor,
    log: serviceLogger(opts.log, "gateway"),
    redisUrl: opts.redisUrl,
    configBoard,
    ...opts.gateway,
    ...(opts.rateLimit ? { rateLimit: opts.rateLimit } : {}),
  });
  await gateway.listen({ host: opts.httpHost, port: opts.httpPort });
  const address = gateway.server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;

  // The operator's port also answers ConnectorAdminService for the connectors this process runs
  // (`npm run admin -- --url <internal url> connector files list --connector ach-nacha`).
  const connectors = createConnectorAdminRouter();
  const internal =
    opts.internalPort === undefined
      ? undefined
      : await serveConnect({
          routes: (router) => {
            system.routes(router);
            router.service(ConnectorAdminService, connectors.handler);
          },
          interceptors: [tracingServerInterceptor(), appErrorInterceptor],
          port: opts.internalPort,
          host: "127.0.0.1",
        });

  return {
    url: `http://${host === "0.0.0.0" ? "127.0.0.1" : host}:${address.port}`,
    internalUrl: internal ? `http://127.0.0.1:${internal.port}` : undefined,
    transportFor: system.transportFor,
    bus,
    db,
    connectors: { attach: (c) => connectors.attach(c), detach: (n) => connectors.detach(n) },
    async stop() {
      system.health.setServing(false);
      await gateway.close();
      await internal?.close();
      await system.stop();
      await bus.close();
      await redisBoard?.close();
      await db.close();
    },
  };
}
