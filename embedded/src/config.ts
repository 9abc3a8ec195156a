import { gatewayEnv } from "@corridor/gateway/config";
import { databaseConnectTimeoutSetting, databasePreparedStatementsSetting, env, kafkaTopicPartitionsGrowSetting, kafkaTopicPartitionsSetting, metricsPortSetting, webhookTargetEnv, z } from "@corridor/kit";

/** Configuration of the embedded process (main.ts): one zod schema over process.env. */
export const embeddedConfigSchema = z.object({
  /** Port of the REST API. */
  CORRIDOR_HTTP_PORT: env.port(8080),
  /** Interface of the REST API; 0.0.0.0 to accept other machines. */
  CORRIDOR_HTTP_HOST: z.string().default("127.0.0.1"),
  /** Loopback port serving every service's Connect API, for `npm run admin`; 0 picks one. */
  CORRIDOR_INTERNAL_PORT: env.port(8081),
  /** Port of the Prometheus scrape endpoint `/metrics` (on CORRIDOR_HTTP_HOST); unset = none (docs/operations.md, "Metrics"). */
  METRICS_PORT: metricsPortSetting,
  /** Where PGlite keeps its data when DATABASE_URL is not set, and the saved sandbox credentials. */
  CORRIDOR_DATA_DIR: z.string().default("./.data"),
  /**
   * PGlite's WebAssembly (when DATABASE_URL is unset) also compiled by V8's optimizing compiler
   * (TurboFan) as it runs: false (the default) keeps V8's baseline compiler only. The optimizing
   * tier costs ~2 CPU-seconds of compilation at every start and made the main thread wait for it
   * (~0.7 s of a 3.5 s warm `npm start`, issue 28, item 4); it wins back ~25% of PGlite's
   * statement throughput only after several seconds of steady load (docs/benchmarks.md).
   */
  CORRIDOR_PGLITE_OPTIMIZE: env.bool(false),
  /** Use this Postgres instead of the embedded PGlite. */
  DATABASE_URL: z.string().optional(),
  /** Parameterised queries on DATABASE_URL as named prepared statements (off behind a pooler that cannot keep them). */
  DATABASE_PREPARED_STATEMENTS: databasePreparedStatementsSetting,
  /** Opening a connection to DATABASE_URL fails after this long (the request answers 503 instead of hanging). */
  DATABASE_CONNECT_TIMEOUT_MS: databaseConnectTimeoutSetting,
  /** Keep rate-limit counters and the auth cache in Redis instead of in memory. */
  REDIS_URL: z.string().optional(),
  /** Use Kafka instead of the in-process bus. */
  KAFKA_BROKERS: env.list(),
  /** Prefix for every topic name. */
  KAFKA_TOPIC_PREFIX: z.string().default(""),
  /** Rail connectors to run in this process, comma-separated (`ach-nacha`, `sepa-iso20022`); their own settings come from the environment (docs/connectors.md). Default none. */
  CORRIDOR_CONNECTORS: env.list(),
  /** With Kafka: partitions of the topics it creates (the kit's one definition; docs/events.md, "Topics"). */
  KAFKA_TOPIC_PARTITIONS: kafkaTopicPartitionsSetting,
  /** With Kafka: add partitions to an existing topic that has fewer than KAFKA_TOPIC_PARTITIONS. */
  KAFKA_TOPIC_PARTITIONS_GROW: kafkaTopicPartitionsGrowSetting,
  /** Fixed credentials for the sandbox platform's first token (both or neither). */
  CORRIDOR_BOOTSTRAP_CLIENT_ID: z.string().optional(),
  CORRIDOR_BOOTSTRAP_CLIENT_SECRET: z.string().min(16).optional(),
  /** The gateway's knobs (rate limits, failed-auth throttle, auth cache, proxy): the same schema entries, and defaults, as the split gateway. */
  ...gatewayEnv,
  /** What a platform's webhookEndpoint may be (the gateway's PATCH /config check; the services read the same keys): the kit's one definition. */
  ...webhookTargetEnv,
}).refine((c) => !!c.CORRIDOR_BOOTSTRAP_CLIENT_ID === !!c.CORRIDOR_BOOTSTRAP_CLIENT_SECRET, {
  message: "set both CORRIDOR_BOOTSTRAP_CLIENT_ID and CORRIDOR_BOOTSTRAP_CLIENT_SECRET, or neither",
  path: ["CORRIDOR_BOOTSTRAP_CLIENT_ID"],
});
