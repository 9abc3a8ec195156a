/**
 * `npm run bench:warm-start`: how long a warm `npm start` takes to be ready (nothing changed since
 * the last build; an existing data directory), against a bare Node start measured in the same
 * rounds (the anchor: this machine is shared and noisy, so the ratio is what compares).
 *
 * Each round runs, in a rotating order:
 * - `npm start` itself (npm, then scripts/start.mjs: the install check, the build check and the
 *   embedded system in one Node process);
 * - scripts/start.mjs alone (what npm runs; npm's own start is the difference);
 * - the three-process chain `npm start` ran before (`pnpm.mjs ensure && build.mjs --quiet && node
 *   dist/app/corridor.mjs embedded`, through a shell), for the before/after;
 * - `node -e 0`, the anchor.
 * A start is ready when GET /readyz answers 200. The figure is wall time from spawn to ready, and
 * the CPU seconds every process of the start used until then (its process group's user + system,
 * children already reaped included, read from /proc).
 *
 *   WARM_START_ROUNDS=5 npm run bench:warm-start
 *
 * Plain JavaScript run by tsx (it imports the test infrastructure's TypeScript).
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { freePortBlock } from "../infra/split-system.ts";

const root = resolve(import.meta.dirname, "../..");
const rounds = Number(process.env.WARM_START_ROUNDS ?? 5);
const TICKS_PER_SECOND = Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout.trim()) || 100;

/** @typedef {{ wallMs: number, cpuSeconds: number }} Start */

/** CPU seconds (user + system, and that of reaped children) of every live process in process group `pgid`. */
function groupCpuSeconds(pgid) {
  let ticks = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue; // gone meanwhile
    }
    // Fields after the command's closing parenthesis: state is field 3, pgrp 5, utime 14 … cstime 17.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(fields[2]) !== pgid) continue;
    ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
  }
  return ticks / TICKS_PER_SECOND;
}

/** @returns {Promise<Start>} */
async function startUntilReady(command, args, dataDir) {
  const base = await freePortBlock(2);
  const started = process.hrtime.bigint();
  const child = spawn(command, args, {
    cwd: root,
    detached: true, // its own process group, so the whole start is measured and stopped
    stdio: "ignore",
    env: { ...process.env, CORRIDOR_DATA_DIR: dataDir, CORRIDOR_HTTP_PORT: String(base), CORRIDOR_INTERNAL_PORT: String(base + 1), LOG_LEVEL: "warn" },
  });
  const pgid = child.pid;
  let exited = false;
  child.once("exit", () => (exited = true));
  try {
    for (;;) {
      if (exited) throw new Error(`${command} ${args.join(" ")} exited before it was ready`);
      const ok = await fetch(`http://127.0.0.1:${base}/readyz`).then((r) => r.ok, () => false);
      if (ok) {
        const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
        return { wallMs, cpuSeconds: groupCpuSeconds(pgid) };
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  } finally {
    const gone = new Promise((r) => (exited ? r(undefined) : child.once("exit", r)));
    try {
      process.kill(-pgid, "SIGTERM");
    } catch {
      /* already gone */
    }
    await Promise.race([gone, new Promise((r) => setTimeout(r, 15_000))]);
    try {
      process.kill(-pgid, "SIGKILL");
    } catch {
      /* gone */
    }
  }
}

/** @returns {Promise<Start>} */
async function bareNode() {
  const started = process.hrtime.bigint();
  const r = spawnSync(process.execPath, ["-e", "0"]);
  const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
  // spawnSync reports no CPU; a bare start's wall time on an idle core is its CPU time, near enough.
  if (r.status !== 0) throw new Error("node -e 0 failed");
  return { wallMs, cpuSeconds: wallMs / 1000 };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const dataDir = mkdtempSync(join(tmpdir(), "corridor-warm-start-"));
const variants = {
  "npm start": () => startUntilReady("npm", ["start", "--silent"], dataDir),
  "node scripts/start.mjs (npm start without npm)": () => startUntilReady(process.execPath, ["scripts/start.mjs"], dataDir),
  "three-process chain (before)": () =>
    startUntilReady("/bin/sh", ["-c", "node scripts/pnpm.mjs ensure && node scripts/build.mjs --quiet && exec node dist/app/corridor.mjs embedded"], dataDir),
  "node -e 0 (anchor)": bareNode,
};
try {
  // The first start builds (if anything changed) and creates the data directory: not measured.
  await variants["npm start"]();
  const results = new Map(Object.keys(variants).map((k) => [k, []]));
  for (let round = 0; round < rounds; round++) {
    const names = Object.keys(variants);
    const order = names.map((_, i) => names[(i + round) % names.length]);
    for (const name of order) results.get(name).push(await variants[name]());
    const load = readFileSync("/proc/loadavg", "utf8").split(" ")[0];
    console.error(`round ${round + 1}/${rounds} done (load ${load})`);
  }
  const anchor = median(results.get("node -e 0 (anchor)").map((s) => s.wallMs));
  console.log(`| start | wall to ready, median (rounds) | CPU-s, median | wall ÷ bare node start |`);
  console.log(`| --- | --- | ---: | ---: |`);
  for (const [name, starts] of results) {
    const wall = median(starts.map((s) => s.wallMs));
    console.log(
      `| ${name} | ${(wall / 1000).toFixed(2)} s (${starts.map((s) => (s.wallMs / 1000).toFixed(2)).join(", ")}) | ${median(starts.map((s) => s.cpuSeconds)).toFixed(2)} | ${(wall / anchor).toFixed(1)} |`,
    );
  }
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
