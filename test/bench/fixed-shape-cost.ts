import { createRequire } from "node:module";
import { resolve } from "node:path";
import { trace } from "@opentelemetry/api";
import { createTracingPlugin, fixedShapeQuery, startTelemetry, TRACER_NAME } from "@corridor/kit";

/**
 * What the kit's fixedShapeQuery (packages/kit/src/db/fixed-shape.ts) saves a hot query in the Node
 * process (issue 28: Kysely's building and compiling was 15–19 % of the ledger's CPU): two of a
 * transfer's real statements, the kit's inbox insert and the ledger's transferParties (three
 * tables, 32 columns), each built, transformed and compiled on every call (before) and compiled
 * once, then only filled with the call's values (after); executed against Kysely's DummyDriver (no
 * database, so only Node's CPU is measured), inside an active span, with the tracer as a service
 * starts it by default (nothing exported). The handle is as DatabaseHandle.forSchema chains it:
 * withSchema and the tracing plugin (embedded mode), and without withSchema (a pool on its
 * schema's search_path, split mode). Rounds alternate; CPU from process.cpuUsage().
 *
 *   node scripts/pnpm.mjs exec tsx test/bench/fixed-shape-cost.ts [calls-per-round] [rounds]
 */
const perRound = Number(process.argv[2] ?? 10_000);
const rounds = Number(process.argv[3] ?? 4);

// Kysely is the kit's dependency, not this package's.
const k = createRequire(resolve(import.meta.dirname, "../../packages/kit/package.json"))("kysely");

const root = new k.Kysely({
  dialect: { createAdapter: () => new k.PostgresAdapter(), createDriver: () => new k.DummyDriver(), createIntrospector: (x: unknown) => new k.PostgresIntrospector(x), createQueryCompiler: () => new k.PostgresQueryCompiler() },
}).withPlugin(createTracingPlugin());
const modes = { "withSchema (embedded)": root.withSchema("ledger"), "search_path pool (split)": root } as const;

// The statements as the kit and the ledger build them (packages/kit/src/outbox/statements.ts,
// services/ledger/src/data/transfers.ts), with their values as arguments.
const inboxInsert = (db: any, a: { consumer: string; eventId: string }) =>
  db
    .insertInto("inbox")
    .values([{ consumer: a.consumer, event_id: a.eventId }])
    .onConflict((oc: any) => oc.columns(["consumer", "event_id"]).doNothing())
    .returning(["consumer", "event_id"]);
const EXTERNAL_COLUMNS = ["id", "platform_id", "owner_kind", "customer_id", "currency", "account_type", "account_info", "platform_account_id", "default_uma_deposit_account", "status", "beneficiary_verification_status", "beneficiary_verified_data", "created_at", "updated_at", "deleted_at"];
const transferParties = (db: any, a: { platformId: string; internalId: string; externalId: string }) =>
  db
    .selectFrom("accounts as a")
    .leftJoin("external_accounts as e", (join: any) => join.on("e.platform_id", "=", a.platformId).on("e.id", "=", a.externalId).on("e.deleted_at", "is", null))
    .leftJoin("customers as c", (join: any) => join.onRef("c.platform_id", "=", "a.platform_id").onRef("c.id", "=", "a.customer_id"))
    .selectAll("a")
    .select(EXTERNAL_COLUMNS.map((c) => k.sql.ref(`e.${c}`).as(`e__${c}`)))
    .select(["c.platform_customer_id as c__platform_customer_id", "c.verification_status as c__verification_status", "c.is_deleted as c__is_deleted"])
    .where("a.platform_id", "=", a.platformId)
    .where("a.id", "=", a.internalId);

const statements = {
  "inbox insert": { build: inboxInsert, cached: fixedShapeQuery(inboxInsert), args: (i: number) => ({ consumer: "ledger.rail-outcomes", eventId: `Event:${i}` }) },
  transferParties: { build: transferParties, cached: fixedShapeQuery(transferParties), args: (i: number) => ({ platformId: "Platform:1", internalId: `InternalAccount:${i}`, externalId: `ExternalAccount:${i}` }) },
};

async function measure(label: string, run: (i: number) => Promise<unknown>): Promise<number> {
  return trace.getTracer(TRACER_NAME).startActiveSpan("round", async (span) => {
    const c0 = process.cpuUsage();
    for (let i = 0; i < perRound; i++) await run(i);
    const c = process.cpuUsage(c0);
    span.end();
    const us = (c.user + c.system) / perRound;
    console.log(`  ${label.padEnd(62)} ${us.toFixed(1)} µs`);
    return us;
  });
}

async function main(): Promise<void> {
  const telemetry = startTelemetry({ serviceName: "bench" });
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const summary: string[] = [];
  try {
    for (const [mode, db] of Object.entries(modes)) {
      for (const [name, s] of Object.entries(statements)) {
        const before = (i: number) => s.build(db, s.args(i) as never).execute();
        const after = (i: number) => s.cached.execute(db, s.args(i) as never);
        await measure(`warm-up ${name}, ${mode}`, async (i) => {
          await before(i);
          await after(i);
        });
        const b: number[] = [];
        const a: number[] = [];
        for (let r = 0; r < rounds; r++) {
          b.push(await measure(`${name}, ${mode}: built and compiled per call`, before));
          a.push(await measure(`${name}, ${mode}: fixedShapeQuery`, after));
        }
        summary.push(`${name}, ${mode}: ${median(b).toFixed(1)} → ${median(a).toFixed(1)} µs of CPU per query (${(median(a) / median(b)).toFixed(2)}×)`);
      }
    }
  } finally {
    await telemetry.shutdown();
  }
  console.log("median per query:");
  for (const line of summary) console.log(`  ${line}`);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
