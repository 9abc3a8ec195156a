import { countTransferHops } from "./floor-hops.js";
import { intFromEnv } from "./load.js";

/**
 * One transfer's hops counted in the built split system, alone (the last step of `npm run
 * bench:floor` without its pieces): SQL statements and transactions per service from PostgreSQL's
 * statement log, RPCs, Kafka messages and deliveries, Redis commands. Needs `npm run build`, a
 * readable server log (FLOOR_PG_LOG) and DATABASE_URL, REDIS_URL, KAFKA_BROKERS.
 *
 *   FLOOR_TRANSFERS=20 node scripts/pnpm.mjs exec tsx test/bench/transfer-hops.ts
 *
 * FLOOR_OPERATION=quote counts a quote and its execution (POST /quotes, then execute) instead.
 */
async function main(): Promise<void> {
  const hops = await countTransferHops({
    databaseUrl: process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres",
    redis: { url: process.env.REDIS_URL ?? "redis://127.0.0.1:6379" },
    kafka: { brokers: process.env.KAFKA_BROKERS ?? "127.0.0.1:19092" },
    transfers: intFromEnv("FLOOR_TRANSFERS", 20, 1),
    port: intFromEnv("BENCH_PORT", 18650, 1024),
    operation: process.env.FLOOR_OPERATION === "quote" ? "quote" : "transfer",
  });
  const { details, ...counts } = hops;
  console.log(JSON.stringify(counts, null, 1));
  for (const d of details) console.log(d);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
