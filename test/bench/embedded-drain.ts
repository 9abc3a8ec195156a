import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { Session } from "node:inspector/promises";
import { API_VERSION, setUpFixtures, startBenchSystem } from "./http-system.js";
import { intFromEnv, runLoad } from "./load.js";

/**
 * What one transfer costs the embedded system on PGlite, through COMPLETED (issue 28, item 4):
 * POST /transfer-out at c=10 for BENCH_DURATION seconds from a worker thread (as bench:http), then
 * waits until every accepted transfer is COMPLETED, and reports per transfer:
 * - the main thread's busy time (event loop utilisation: the gateway, the services, the bus and
 *   PGlite's WebAssembly all run on it), and how busy it was while the backlog drained (a drain
 *   below 100 % busy is waiting: a timer or a poll paces it, not the CPU);
 * - PGlite's statements (extended-protocol Parse messages, i.e. parameterised statements, and
 *   simple-protocol Query messages: BEGIN, COMMIT, ROLLBACK and other exec() text) and the time
 *   spent inside PGlite's execProtocolStream (the WebAssembly backend);
 * - with EMBEDDED_DRAIN_TOP=n, the n statements run most often (schema and first words).
 *
 * With EMBEDDED_DRAIN_PROFILE=<file.cpuprofile>, the main thread's V8 CPU profile of the load and
 * the drain (not the setup), for test/bench/profile-summary.ts.
 *
 *   unset DATABASE_URL; BENCH_DURATION=5 node scripts/pnpm.mjs exec tsx test/bench/embedded-drain.ts
 */

const durationSeconds = intFromEnv("BENCH_DURATION", 5, 1);
const connections = intFromEnv("BENCH_CONNECTIONS", 10, 1);
const top = intFromEnv("EMBEDDED_DRAIN_TOP", 0, 0);
if (process.env.DATABASE_URL) throw new Error("embedded-drain measures PGlite: unset DATABASE_URL");

// The PGlite the kit loads (same module URL, so the same class).
const kitRequire = createRequire(new URL("../../packages/kit/package.json", import.meta.url));
// require.resolve answers the CommonJS build; the kit imports the ESM one beside it.
const pgliteEsm = kitRequire.resolve("@electric-sql/pglite").replace(/index\.cjs$/, "index.js");
const { PGlite } = (await import(pathToFileURL(pgliteEsm).href)) as { PGlite: { prototype: object } };

/** The main thread's CPU time in ms (user + system, /proc, 10 ms ticks): the load generator's thread is not in it. */
function mainThreadCpuMs(): number {
  const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // utime and stime are fields 14 and 15 of stat; fields[0] here is field 3.
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

const counts = { parse: 0, query: 0, wasmMs: 0 };
/** Per statement shape: how many, and the ms spent in PGlite on its messages (parse to sync). */
const statements = new Map<string, { n: number; ms: number }>();
let current: { n: number; ms: number } | undefined;
const decoder = new TextDecoder();
/** Parse: 'P', int32 length, statement name (cstring), query text (cstring). Query: 'Q', int32 length, text. */
function textOf(message: Uint8Array): string {
  let i = 5;
  if (message[0] === 0x50) while (message[i] !== 0) i++;
  if (message[0] === 0x50) i++;
  let end = i;
  while (end < message.length && message[end] !== 0) end++;
  return decoder.decode(message.subarray(i, end));
}
const proto = PGlite.prototype as unknown as { execProtocolStream: (message: Uint8Array, opts?: unknown) => Promise<unknown> };
const original = proto.execProtocolStream;
proto.execProtocolStream = async function (this: unknown, message: Uint8Array, opts?: unknown) {
  const kind = message[0];
  if (kind === 0x50 || kind === 0x51) {
    if (kind === 0x50) counts.parse++;
    else counts.query++;
    if (top > 0) {
      const text = textOf(message);
      const schema = /"([a-z_]+)"\./.exec(text)?.[1] ?? "-";
      const shape = `${schema}: ${text.replace(/\s+/g, " ").slice(0, 110)}`;
      current = statements.get(shape);
      if (!current) statements.set(shape, (current = { n: 0, ms: 0 }));
      current.n++;
    }
  }
  const started = performance.now();
  try {
    return await original.call(this, message, opts);
  } finally {
    const ms = performance.now() - started;
    counts.wasmMs += ms;
    if (current) current.ms += ms;
  }
};

const sys = await startBenchSystem();
try {
  const f = await setUpFixtures(sys, 1);
  const completed = async () => (await sys.call("GET", "/transactions?type=OUTGOING&status=COMPLETED&limit=1")).body?.totalCount as number;
  // Setup's own transfers complete first.
  while ((await completed()) < f.transfersAccepted) await new Promise((r) => setTimeout(r, 100));
  const before = await completed();
  await new Promise((r) => setTimeout(r, 1_000));

  const c0 = { ...counts };
  statements.clear();
  const profileFile = process.env.EMBEDDED_DRAIN_PROFILE;
  const profiler = profileFile ? new Session() : undefined;
  if (profiler) {
    profiler.connect();
    await profiler.post("Profiler.enable");
    await profiler.post("Profiler.start");
  }
  const cpu0 = mainThreadCpuMs();
  const proc0 = process.cpuUsage();
  const elu0 = performance.eventLoopUtilization();
  const t0 = performance.now();
  const load = await runLoad({
    url: sys.url,
    method: "POST",
    path: `/${API_VERSION}/transfer-out`,
    headers: { authorization: sys.authorization, "content-type": "application/json" },
    body: JSON.stringify({ source: { accountId: f.fiatAccountId }, destination: { accountId: f.usdPayeeId }, amount: 1 }),
    uniqueIdempotencyKey: true,
    connections,
    durationSeconds,
  });
  const tLoad = performance.now();
  const eluLoad = performance.eventLoopUtilization(elu0);
  if (load.non2xx || load.errors || load.timeouts) throw new Error(`load failed: ${JSON.stringify(load.statusCodes)} ${load.samples.join(" | ")}`);
  // Accepted transfers, as the system counts them (the load generator may miss answers in flight at its end).
  const outgoing = async () => (await sys.call("GET", "/transactions?type=OUTGOING&limit=1")).body?.totalCount as number;
  const target = await outgoing();
  let done = await completed();
  const doneAtLoadEnd = done;
  while (done < target) {
    await new Promise((r) => setTimeout(r, 50));
    done = await completed();
  }
  const t1 = performance.now();
  const cpu = mainThreadCpuMs() - cpu0;
  const proc = process.cpuUsage(proc0);
  if (profiler && profileFile) {
    const { profile } = await profiler.post("Profiler.stop");
    writeFileSync(profileFile, JSON.stringify(profile));
    profiler.disconnect();
  }
  const elu = performance.eventLoopUtilization(elu0);
  const eluDrain = performance.eventLoopUtilization(performance.eventLoopUtilization(), eluLoad);
  const n = target - before;
  const fmt = (x: number, d = 1) => x.toFixed(d);
  console.log(`transfers ${n} accepted in ${durationSeconds} s (${fmt(n / durationSeconds)}/s; ${doneAtLoadEnd - before} COMPLETED by then); all COMPLETED ${fmt((t1 - tLoad) / 1000, 2)} s after the load: ${fmt(n / ((t1 - t0) / 1000))}/s through COMPLETED`);
  console.log(`main thread CPU ${fmt(cpu, 0)} ms = ${fmt(cpu / n, 2)} ms per transfer (/proc; the load generator's thread excluded); the whole process ${fmt((proc.user + proc.system) / 1000, 0)} ms over ${fmt((t1 - t0) / 1000, 1)} s`);
  console.log(`main thread busy ${fmt(elu.active)} ms = ${fmt(elu.active / n, 2)} ms per transfer; busy ${fmt(eluLoad.utilization * 100, 0)} % under load, ${fmt(eluDrain.utilization * 100, 0)} % while draining`);
  const parse = counts.parse - c0.parse;
  const query = counts.query - c0.query;
  const wasm = counts.wasmMs - c0.wasmMs;
  console.log(`PGlite: ${fmt((parse + query) / n, 2)} statements per transfer (${fmt(parse / n, 2)} parameterised, ${fmt(query / n, 2)} simple: BEGIN/COMMIT/…); ${fmt(wasm / n, 2)} ms per transfer inside PGlite (${fmt((wasm / cpu) * 100, 0)} % of the main thread's CPU)`);
  console.log(`(the COMPLETED count is polled every 50 ms while draining, GET /transactions: its statements are included)`);
  if (top > 0) {
    console.log("per transfer: statements, ms in PGlite; statement (by ms)");
    for (const [shape, k] of [...statements].sort((a, b) => b[1].ms - a[1].ms).slice(0, top)) console.log(`${fmt(k.n / n, 2).padStart(6)} ${fmt(k.ms / n, 2).padStart(6)}  ${shape}`);
  }
} finally {
  await sys.stop();
}
