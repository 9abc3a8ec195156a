import { appendFileSync } from "node:fs";
import { WebhookReceiver } from "../chaos/client.js";
import { splitDist } from "../infra/split-dist.js";
import { startSplitSystem } from "../infra/split-system.js";
import { runConservation, setUpConservation, WRITES_PER_CYCLE } from "./conserve.js";

// `npm run conserve:replicas`: issue 28's long conservation run. A split system with two replicas of
// every service (the compiled app) on DATABASE_URL, REDIS_URL and KAFKA_BROKERS; the chaos suite's
// money workload, CONSERVE_OPERATIONS money writes (default 20,000) from CONSERVE_CUSTOMERS
// customers at once (default 20); one replica of every service killed with SIGKILL when half the
// writes are acknowledged (CONSERVE_KILL_AT, a fraction); then the books read back
// (test/replicas/conserve.ts). Prints the report as JSON and exits 1 when a guarantee broke.
// CONSERVE_LOG names a file for every line the system's processes write; CONSERVE_CLIENT_DEADLINE_MS
// how long a write is retried under its key (default 10 minutes). A run that broke a guarantee
// keeps its database (the URL is printed) for the rows behind the report.

const env = process.env;
const missing = ["DATABASE_URL", "REDIS_URL", "KAFKA_BROKERS"].filter((k) => !env[k]);
if (missing.length > 0) {
  console.error(`conserve:replicas needs ${missing.join(", ")} (a PostgreSQL, a Redis and a Kafka broker on loopback)`);
  process.exit(2);
}
const operations = Number(env.CONSERVE_OPERATIONS ?? 20_000);
const customers = Number(env.CONSERVE_CUSTOMERS ?? 20);
const killAt = Number(env.CONSERVE_KILL_AT ?? 0.5);
if (!Number.isInteger(operations) || operations < WRITES_PER_CYCLE || !Number.isInteger(customers) || customers < 1 || !(killAt > 0 && killAt < 1)) {
  console.error("CONSERVE_OPERATIONS and CONSERVE_CUSTOMERS are positive integers, CONSERVE_KILL_AT a fraction between 0 and 1");
  process.exit(2);
}
const cyclesPerCustomer = Math.ceil(operations / (customers * WRITES_PER_CYCLE));
const log = (line: string) => console.log(`${new Date().toISOString()} ${line}`);

const receiver = new WebhookReceiver();
log(`building the app and starting a split system with 2 replicas of every service`);
const system = await startSplitSystem(
  { DATABASE_URL: env.DATABASE_URL!, REDIS_URL: env.REDIS_URL!, KAFKA_BROKERS: env.KAFKA_BROKERS! },
  {
    CORRIDOR_SPLIT_REPLICAS: "2",
    ...(await splitDist("conserve")),
    CORRIDOR_FX_SANDBOX_DRIFT_BPS: "0",
    CORRIDOR_SPLIT_RESTART_LIMIT: "3",
    CORRIDOR_SPLIT_RESTART_BACKOFF_MS: "500",
    CORRIDOR_SPLIT_RESTART_BACKOFF_MAX_MS: "5000",
    KAFKA_TOPIC_PARTITIONS: env.KAFKA_TOPIC_PARTITIONS ?? "12",
    // 16 processes (two of each of the 7 services, the gateway, the connectors) on one PostgreSQL
    // whose max_connections is 100 by default: 10 per pool (the default) would run out of
    // connections under load ("too many clients already"), so 5 (docs/operations.md: replicas ×
    // processes × DATABASE_POOL_SIZE must stay below the server's max_connections).
    DATABASE_POOL_SIZE: env.DATABASE_POOL_SIZE ?? "5",
    // The gateway's per-client limit (1,000 requests a minute by default) would pace the run's one
    // platform at ~17 requests a second, the workload's and the read-back's alike: the run measures
    // the system, not the limiter.
    RATE_LIMIT_MAX: env.RATE_LIMIT_MAX ?? "1000000",
  },
  env.CONSERVE_LOG ? (line) => appendFileSync(env.CONSERVE_LOG!, `${new Date().toISOString()} ${line}\n`) : undefined,
  // Outside vitest there is no migrated template: the services migrate the fresh database.
  { fromTemplate: false },
);
let exitCode = 1;
try {
  log(`ready at ${system.info.url}; ${customers} customers × ${cyclesPerCustomer} cycles × ${WRITES_PER_CYCLE} writes`);
  const setUp = await setUpConservation(system, receiver, customers);
  const report = await runConservation(system, receiver, setUp, {
    customers,
    cyclesPerCustomer,
    killAfterAcknowledged: Math.floor(customers * cyclesPerCustomer * WRITES_PER_CYCLE * killAt),
    settleTimeoutMs: 600_000,
    progress: log,
    clientDeadlineMs: Number(env.CONSERVE_CLIENT_DEADLINE_MS ?? 600_000),
  });
  console.log(JSON.stringify({ ...report, refused: report.refused.slice(0, 10), answers500: report.answers500.slice(0, 10) }, null, 2));
  log(report.problems.length === 0 ? "conserved: no guarantee broke" : `${report.problems.length} problems`);
  exitCode = report.problems.length === 0 ? 0 : 1;
} catch (err) {
  console.error(err);
} finally {
  // A run that broke a guarantee keeps its database, so the rows behind the report can be read.
  if (exitCode !== 0) log(`keeping the database for inspection: ${system.databaseUrl}`);
  await system.stop({ keepDatabase: exitCode !== 0 }).catch(() => {});
  await receiver.stop();
}
process.exit(exitCode);
