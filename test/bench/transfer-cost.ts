import { readFileSync, readdirSync } from "node:fs";
import { resolve } from "node:path";
import { brokerAnswers, defaultPort, startBroker, stopBroker } from "../infra/kafka/broker.mjs";
import { API_VERSION, eventually, setUpFixtures, setUpFundedCustomers } from "./http-system.js";
import { intFromEnv } from "./load.js";
import { cpuSeconds, startProcessSystem, type Mode } from "./process-system.js";

/**
 * What one transfer-out costs, end to end, and how long it takes alone (`npm run bench:cost`).
 * bench:compare says how fast; this says where the CPU goes, which is what bounds the throughput
 * on a 2-core machine:
 *  - CPU per transfer: N transfers one after another, then wait until all of them COMPLETED and
 *    the system is quiet again; the CPU every process used (Corridor's, every postgres process's,
 *    the Kafka broker's), divided by N. Includes the downstream work (rail, outcome, events,
 *    webhook queue) a transfer causes.
 *  - Alone: transfers spaced by a quiet pause, so no earlier transfer's downstream work competes;
 *    the latency a client sees when nothing else runs.
 * COST_OPERATION=quote measures a quote and its execution instead (POST /quotes, 100.00 USD to an
 * EUR account, then POST /quotes/{id}/execute, through COMPLETED): per pair, with the latency of
 * each request of the pair.
 * Environment: COST_MODE (split | split-replicas | embedded-postgres, default split), COST_TRANSFERS (default 200),
 * COST_ALONE (default 30), COST_PAUSE_MS (default 400), COST_ROOT (another checkout to run, built
 * with its own scripts, for a before/after; default this one), DATABASE_URL, REDIS_URL,
 * KAFKA_BROKERS.
 */

const mode = (process.env.COST_MODE ?? "split") as Mode;
const operation = process.env.COST_OPERATION ?? "transfer";
if (operation !== "transfer" && operation !== "quote") throw new Error(`COST_OPERATION is transfer or quote, not ${operation}`);
const transfers = intFromEnv("COST_TRANSFERS", 200, 1);
const alone = intFromEnv("COST_ALONE", 30, 1);
const pauseMs = intFromEnv("COST_PAUSE_MS", 400, 0);
const port = intFromEnv("BENCH_PORT", 18400, 1024);
const databaseUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

/** Every process on the machine whose command line matches, with a label. */
function processes(match: (cmd: string) => string | undefined): Map<number, string> {
  const out = new Map<number, string>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, "utf8").replace(/\0/g, " ");
      const label = match(cmd);
      if (label) out.set(Number(entry), label);
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

function labelOf(cmd: string, ours: Set<number>, pid: number): string | undefined {
  if (ours.has(pid)) {
    // Counted with replicas only (process-system.ts): the balancers of an older checkout, else a supervisor.
    if (/start-split/.test(cmd)) return "split launcher";
    const m = /corridor\.mjs\s+([\w-]+)/.exec(cmd);
    return `corridor ${m?.[1] ?? cmd.slice(0, 40)}`;
  }
  if (/^postgres/.test(cmd)) return "postgres (all backends)";
  if (/kafka\.Kafka|KafkaRaftServer|kafka-server/.test(cmd)) return "kafka broker";
  return undefined;
}

const snapshot = (pids: Map<number, string>) => {
  const out = new Map<number, number>();
  for (const pid of pids.keys()) {
    try {
      out.set(pid, cpuSeconds(pid));
    } catch {
      // gone
    }
  }
  return out;
};

async function main(): Promise<void> {
  let kafkaBrokers = process.env.KAFKA_BROKERS || undefined;
  let startedBroker = false;
  if ((mode === "split" || mode === "split-replicas") && !kafkaBrokers) {
    if (!(await brokerAnswers(defaultPort))) startedBroker = true;
    kafkaBrokers = (await startBroker({ port: defaultPort })).brokers;
  }
  const sys = await startProcessSystem(mode, { databaseUrl, redisUrl, kafkaBrokers }, port, process.env.COST_ROOT ? resolve(process.env.COST_ROOT) : undefined);
  try {
    const fixtures = await setUpFixtures(sys, 1);
    const funded = await setUpFundedCustomers(sys, 9, `cost-${Date.now()}`);
    const pairs = [{ accountId: fixtures.fiatAccountId, payeeId: fixtures.usdPayeeId }, ...funded.map((f) => ({ accountId: f.accountId, payeeId: f.payeeId }))];
    let n = 0;
    // The quote operation's two requests, each timed (the pair's latency is their sum).
    const quoteCreate: number[] = [];
    const quoteExecute: number[] = [];
    const transferOne = async () => {
      const p = pairs[n++ % pairs.length]!;
      const t0 = performance.now();
      const res = await sys.call("POST", "/transfer-out", { source: { accountId: p.accountId }, destination: { accountId: p.payeeId }, amount: 1 }, { "idempotency-key": `cost-${n}-${Date.now()}` });
      if (res.status !== 201) throw new Error(`transfer-out answered ${res.status}: ${JSON.stringify(res.body)}`);
      return performance.now() - t0;
    };
    const quoteOne = async () => {
      n++;
      const t0 = performance.now();
      const quote = { source: { sourceType: "ACCOUNT", accountId: fixtures.fiatAccountId }, destination: { destinationType: "ACCOUNT", accountId: fixtures.eurPayeeId }, lockedCurrencySide: "SENDING", lockedCurrencyAmount: 10_000 };
      const created = await sys.call("POST", "/quotes", quote, { "idempotency-key": `cost-q-${n}-${Date.now()}` });
      if (created.status !== 201 && created.status !== 200) throw new Error(`POST /quotes answered ${created.status}: ${JSON.stringify(created.body)}`);
      const t1 = performance.now();
      const executed = await sys.call("POST", `/quotes/${created.body.id}/execute`, undefined, { "idempotency-key": `cost-x-${n}-${Date.now()}` });
      if (executed.status !== 200) throw new Error(`execute answered ${executed.status}: ${JSON.stringify(executed.body)}`);
      const t2 = performance.now();
      quoteCreate.push(t1 - t0);
      quoteExecute.push(t2 - t1);
      return t2 - t0;
    };
    const one = operation === "quote" ? quoteOne : transferOne;
    const completedCount = async () => Number((await sys.call("GET", "/transactions?type=OUTGOING&status=COMPLETED&limit=1")).body?.totalCount ?? 0);
    const outgoingCount = async () => Number((await sys.call("GET", "/transactions?type=OUTGOING&limit=1")).body?.totalCount ?? 0);
    const settle = async () => {
      const all = await outgoingCount();
      await eventually("all transfers COMPLETED", async () => ((await completedCount()) >= all ? true : undefined), 600_000);
      await new Promise((r) => setTimeout(r, 3_000));
    };
    // Warm every path first (JIT, pools, prepared statements).
    for (let i = 0; i < 30; i++) await one();
    await settle();

    const ours = new Set(sys.pids());
    const pids = processes((cmd) => labelOf(cmd, ours, -1));
    for (const pid of ours) pids.set(pid, labelOf(readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " "), ours, pid)!);
    // Idle baseline over 5 s, subtracted from the run's CPU.
    const idle0 = snapshot(pids);
    await new Promise((r) => setTimeout(r, 5_000));
    const idle1 = snapshot(pids);
    const before = snapshot(pids);
    const t0 = Date.now();
    const sequential: number[] = [];
    for (let i = 0; i < transfers; i++) sequential.push(await one());
    await settle();
    const after = snapshot(pids);
    const seconds = (Date.now() - t0) / 1000;
    const byLabel = new Map<string, number>();
    for (const [pid, label] of pids) {
      const used = (after.get(pid) ?? 0) - (before.get(pid) ?? 0);
      const idle = (((idle1.get(pid) ?? 0) - (idle0.get(pid) ?? 0)) / 5) * seconds;
      byLabel.set(label, (byLabel.get(label) ?? 0) + Math.max(0, used - idle));
    }
    const total = [...byLabel.values()].reduce((a, b) => a + b, 0);
    const what = operation === "quote" ? "quote + execute pair" : "transfer-out";
    console.log(`\n${mode}: CPU per ${what} through COMPLETED, ${transfers} one after another (idle CPU subtracted)`);
    for (const [label, s] of [...byLabel].sort((a, b) => b[1] - a[1])) console.log(`  ${label.padEnd(32)} ${((s * 1000) / transfers).toFixed(2).padStart(7)} ms`);
    console.log(`  ${"total".padEnd(32)} ${((total * 1000) / transfers).toFixed(2).padStart(7)} ms`);
    const stats = (xs: number[]) => {
      const s = [...xs].sort((a, b) => a - b);
      const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
      return `mean ${(s.reduce((a, b) => a + b, 0) / s.length).toFixed(1)} ms, p50 ${q(0.5).toFixed(1)}, p90 ${q(0.9).toFixed(1)}, max ${s[s.length - 1]!.toFixed(1)}`;
    };
    console.log(`  latency, one after another: ${stats(sequential)}`);
    if (operation === "quote") {
      console.log(`    POST /quotes: ${stats(quoteCreate.slice(-transfers))}`);
      console.log(`    POST /quotes/{id}/execute: ${stats(quoteExecute.slice(-transfers))}`);
    }

    const lone: number[] = [];
    for (let i = 0; i < alone; i++) {
      await new Promise((r) => setTimeout(r, pauseMs));
      lone.push(await one());
    }
    console.log(`  latency, alone (${pauseMs} ms apart): ${stats(lone)}`);
  } finally {
    await sys.stop();
    if (startedBroker) await stopBroker({ port: defaultPort });
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
