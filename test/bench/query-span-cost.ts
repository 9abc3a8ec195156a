import { createRequire } from "node:module";
import { resolve } from "node:path";
import { trace } from "@opentelemetry/api";
import { createTracingPlugin, startTelemetry, TRACER_NAME, type SpanProcessor } from "@corridor/kit";

/**
 * What the Kysely tracing plugin costs a query in the Node process when no span leaves it
 * (docs/benchmarks.md, "Where a transfer's CPU goes now"): the same queries built, transformed
 * (withSchema and the plugin, as DatabaseHandle.forSchema chains them) and compiled against Kysely's
 * DummyDriver (no database, so only Node's CPU is measured), inside an active span, with the
 * tracer as a service starts it by default (nothing exported) and as it was before the plugin
 * looked at spansLeaveProcess (a span processor present: every query a span and a second
 * compilation). Rounds alternate; CPU from process.cpuUsage().
 *
 * Then, with the default tracer, the same queries without withSchema: what a pool on its schema's
 * search_path runs (DATABASE_SCHEMA_SEARCH_PATH, db/search-path.ts), against withSchema as anchor.
 *
 *   node scripts/pnpm.mjs exec tsx test/bench/query-span-cost.ts [queries-per-round] [rounds]
 */
const perRound = Number(process.argv[2] ?? 20_000);
const rounds = Number(process.argv[3] ?? 4);

// Kysely is the kit's dependency, not this package's.
const k = createRequire(resolve(import.meta.dirname, "../../packages/kit/package.json"))("kysely");
/** A span processor that does nothing, as the SDK's NoopSpanProcessor. */
const noop: SpanProcessor = { onStart() {}, onEnd() {}, forceFlush: async () => {}, shutdown: async () => {} };

/** The service pool's root: the dialect over a DummyDriver, and the tracing plugin. */
const root = new k.Kysely({
  dialect: { createAdapter: () => new k.PostgresAdapter(), createDriver: () => new k.DummyDriver(), createIntrospector: (x: unknown) => new k.PostgresIntrospector(x), createQueryCompiler: () => new k.PostgresQueryCompiler() },
}).withPlugin(createTracingPlugin());
/** forSchema without the search_path setting: WithSchemaPlugin on every query. */
const qualified = root.withSchema("ledger");
let db = qualified;

async function queries(n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    await db.insertInto("inbox").values({ consumer: "ledger.rail-outcomes", event_id: `Event:${i}` }).onConflict((oc: any) => oc.columns(["consumer", "event_id"]).doNothing()).returning("event_id").executeTakeFirst();
    await db
      .selectFrom("transactions as t")
      .innerJoin("accounts as a", "a.id", "t.account_id")
      .select(["t.id", "t.status", "t.amount", "a.balance", "a.held"])
      .where("t.id", "=", `Transaction:${i}`)
      .where("t.platform_id", "=", "Platform:1")
      .forUpdate()
      .executeTakeFirst();
  }
}

async function measure(label: string, start: () => { shutdown(): Promise<void> }): Promise<number> {
  const telemetry = start();
  try {
    return await trace.getTracer(TRACER_NAME).startActiveSpan("round", async (span) => {
      const c0 = process.cpuUsage();
      await queries(perRound / 2);
      const c = process.cpuUsage(c0);
      span.end();
      const us = (c.user + c.system) / perRound;
      console.log(`  ${label.padEnd(44)} ${us.toFixed(1)} µs of CPU per query`);
      return us;
    });
  } finally {
    await telemetry.shutdown();
  }
}

async function main(): Promise<void> {
  const before: number[] = [];
  const after: number[] = [];
  await measure("warm-up", () => startTelemetry({ serviceName: "bench", spanProcessors: [noop] }));
  for (let r = 0; r < rounds; r++) {
    before.push(await measure("query spans (a span processor present)", () => startTelemetry({ serviceName: "bench", spanProcessors: [noop] })));
    after.push(await measure("no query spans (nothing exported: the default)", () => startTelemetry({ serviceName: "bench" })));
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  console.log(`median: ${median(before).toFixed(1)} → ${median(after).toFixed(1)} µs per query`);

  // withSchema (the anchor) against the plain Kysely of a search_path pool, both with the default tracer.
  const withSchema: number[] = [];
  const bare: number[] = [];
  for (let r = 0; r < rounds; r++) {
    db = qualified;
    withSchema.push(await measure("withSchema (DATABASE_SCHEMA_SEARCH_PATH=false)", () => startTelemetry({ serviceName: "bench" })));
    db = root;
    bare.push(await measure("unqualified (search_path pool: the default)", () => startTelemetry({ serviceName: "bench" })));
  }
  db = qualified;
  console.log(`unqualified / withSchema, median per query: ${(median(bare) / median(withSchema)).toFixed(2)}`);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
