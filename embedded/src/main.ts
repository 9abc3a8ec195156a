import { join, resolve } from "node:path";
import { createProcessLogger, env, loadConfig, startTelemetry, z } from "@corridor/kit";
import { banner, ensureSandboxPlatform } from "./bootstrap.js";
import { startEmbedded } from "./system.js";

const config = loadConfig(
  z.object({
    /** Port of the REST API. */
    CORRIDOR_HTTP_PORT: env.port(8080),
    /** Interface of the REST API; 0.0.0.0 to accept other machines. */
    CORRIDOR_HTTP_HOST: z.string().default("127.0.0.1"),
    /** Loopback port serving every service's Connect API, for `npm run admin`; 0 picks one. */
    CORRIDOR_INTERNAL_PORT: env.port(8081),
    /** Where PGlite keeps its data when DATABASE_URL is not set, and the saved sandbox credentials. */
    CORRIDOR_DATA_DIR: z.string().default("./.data"),
    /** Use this Postgres instead of the embedded PGlite. */
    DATABASE_URL: z.string().optional(),
    /** Keep rate-limit counters and the auth cache in Redis instead of in memory. */
    REDIS_URL: z.string().optional(),
    /** Use Kafka instead of the in-process bus. */
    KAFKA_BROKERS: env.list(),
    /** Prefix for every topic name. */
    KAFKA_TOPIC_PREFIX: z.string().default(""),
    /** Fixed credentials for the sandbox platform's first token (both or neither). */
    CORRIDOR_BOOTSTRAP_CLIENT_ID: z.string().optional(),
    CORRIDOR_BOOTSTRAP_CLIENT_SECRET: z.string().min(16).optional(),
    /** Requests per credential (or per IP without one) in each rate-limit window. */
    RATE_LIMIT_MAX: env.int(1000),
    /** Rate-limit window in milliseconds. */
    RATE_LIMIT_WINDOW_MS: env.int(60_000),
  }).refine((c) => !!c.CORRIDOR_BOOTSTRAP_CLIENT_ID === !!c.CORRIDOR_BOOTSTRAP_CLIENT_SECRET, {
    message: "set both CORRIDOR_BOOTSTRAP_CLIENT_ID and CORRIDOR_BOOTSTRAP_CLIENT_SECRET, or neither",
    path: ["CORRIDOR_BOOTSTRAP_CLIENT_ID"],
  }),
);

const telemetry = startTelemetry({ serviceName: "corridor" });
const log = createProcessLogger("corridor");
const dataDir = resolve(config.CORRIDOR_DATA_DIR);

const system = await startEmbedded({
  log,
  databaseUrl: config.DATABASE_URL,
  dataDir,
  redisUrl: config.REDIS_URL,
  kafkaBrokers: config.KAFKA_BROKERS,
  kafkaTopicPrefix: config.KAFKA_TOPIC_PREFIX,
  onConsumerStopped: (group) => {
    log.fatal({ group }, "a Kafka consumer stopped for good; exiting so the supervisor restarts Corridor");
    process.exit(1);
  },
  httpHost: config.CORRIDOR_HTTP_HOST,
  httpPort: config.CORRIDOR_HTTP_PORT,
  internalPort: config.CORRIDOR_INTERNAL_PORT,
  rateLimit: { max: config.RATE_LIMIT_MAX, timeWindowMs: config.RATE_LIMIT_WINDOW_MS },
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
  await telemetry.shutdown();
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));
