import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { createFreshDatabase } from "../infra/databases.js";
import { API_VERSION, type BenchSystem } from "./http-system.js";

/**
 * Corridor as an operator runs it, in processes of its own (never in the benchmark's process): the
 * compiled JavaScript `npm run build` writes to dist/app, started the way `npm start` (embedded) and
 * `npm run start:split` (split) start it, on loopback, against a fresh Postgres database (dropped
 * afterwards; none for embedded PGlite). The sandbox platform gets fixed bootstrap credentials, so
 * the benchmark signs in without reading a banner.
 */

/** split-replicas: `start:split --replicas 2`, two processes of every service, each caller calling them in turn. */
export type Mode = "split" | "split-replicas" | "embedded-postgres" | "embedded-pglite";

export interface ProcessSystem extends BenchSystem {
  mode: Mode;
  /** From spawning the processes to the platform's first 200 on GET /config, ms. */
  launchToReadyMs: number;
  /**
   * The processes that make up the system (the split launcher excluded where it only supervises;
   * still counted with replicas, where it once balanced every call, so a comparison shows it idle).
   */
  pids(): number[];
}

/** The rate limit still runs on every request but never answers 429 (a limit is not a speed). */
const UNLIMITED = { RATE_LIMIT_MAX: "1000000000", RATE_LIMIT_WINDOW_MS: "60000" };

const here = resolve(import.meta.dirname, "../..");

/**
 * How a checkout's `npm start` runs the embedded system: the compiled build when its start script
 * does (this tree), tsx otherwise (an older baseline checkout).
 */
function embeddedCommand(root: string): string[] {
  const start: string = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).scripts?.start ?? "";
  return start.includes("dist/app/corridor.mjs") ? [join(root, "dist/app/corridor.mjs"), "embedded"] : ["--import", "tsx", join(root, "embedded/src/main.ts")];
}

export async function startProcessSystem(
  mode: Mode,
  infra: { databaseUrl: string; redisUrl: string; kafkaBrokers?: string },
  port: number,
  /** The checkout to run (default this one); a baseline checkout must have run its own build. */
  root = here,
  /** Called with the fresh database's URL before any process starts (test/bench/floor-hops.ts sets logging on it). */
  hooks: { onDatabase?: (url: string) => Promise<void> } = {},
): Promise<ProcessSystem> {
  const fresh = mode === "embedded-pglite" ? undefined : await createFreshDatabase(infra.databaseUrl, "corridor_cmp");
  if (fresh) await hooks.onDatabase?.(fresh.url);
  const dataDir = mkdtempSync(join(tmpdir(), "corridor-bench-"));
  const clientId = `cli_bench${randomBytes(6).toString("hex")}`;
  const clientSecret = randomBytes(24).toString("base64url");
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    ...UNLIMITED,
    CORRIDOR_HTTP_PORT: String(port),
    CORRIDOR_DATA_DIR: dataDir,
    CORRIDOR_BOOTSTRAP_CLIENT_ID: clientId,
    CORRIDOR_BOOTSTRAP_CLIENT_SECRET: clientSecret,
    LOG_LEVEL: process.env.LOG_LEVEL ?? "warn",
  };
  // BENCH_CPU_PROFILE=<dir>: every Corridor process writes a V8 CPU profile there when it stops
  // (summarised by test/bench/profile-summary.ts).
  const profileArgs = process.env.BENCH_CPU_PROFILE ? ["--cpu-prof", `--cpu-prof-dir=${join(resolve(process.env.BENCH_CPU_PROFILE), mode)}`] : [];
  const split = mode === "split" || mode === "split-replicas";
  if (split) env.CORRIDOR_SPLIT_NODE_ARGS = profileArgs.join(" ");
  delete env.DATABASE_URL;
  delete env.REDIS_URL;
  delete env.KAFKA_BROKERS;
  let args: string[];
  if (split) {
    if (!infra.kafkaBrokers) throw new Error("split mode needs a Kafka broker");
    Object.assign(env, {
      DATABASE_URL: fresh!.url,
      REDIS_URL: infra.redisUrl,
      KAFKA_BROKERS: infra.kafkaBrokers,
      KAFKA_TOPIC_PREFIX: `bench-${randomBytes(4).toString("hex")}.`,
      CORRIDOR_SPLIT_PORT_BASE: String(port + 10),
      CORRIDOR_SPLIT_RUNTIME: "dist",
      // Replica 1 of service i listens on the base + 1 + i, replica r > 1 on the base + 10 r + 1 + i
      // (start-split.ts): the block from port + 10 holds both replicas' ports.
      CORRIDOR_SPLIT_REPLICAS: mode === "split-replicas" ? "2" : "1",
      // The launcher's own bound (90 s by default) within the 180 s this waits for the first 200:
      // twice the processes start on the same cores with replicas.
      CORRIDOR_READY_TIMEOUT_MS: process.env.CORRIDOR_READY_TIMEOUT_MS ?? "170000",
    });
    args = ["--import", "tsx", join(root, "scripts/start-split.ts")];
  } else {
    Object.assign(env, { CORRIDOR_INTERNAL_PORT: String(port + 1) });
    if (fresh) Object.assign(env, { DATABASE_URL: fresh.url, REDIS_URL: infra.redisUrl });
    args = [...profileArgs, ...embeddedCommand(root)];
  }

  const started = Date.now();
  const child: ChildProcess = spawn(process.execPath, args, { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] });
  const logs: string[] = [];
  for (const stream of [child.stdout!, child.stderr!]) {
    createInterface({ input: stream }).on("line", (l) => {
      logs.push(l);
      if (logs.length > 200) logs.shift();
    });
  }
  let exited = false;
  child.once("exit", () => (exited = true));

  const url = `http://127.0.0.1:${port}`;
  const authorization = `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString("base64")}`;
  const deadline = started + 180_000;
  for (;;) {
    if (exited) throw new Error(`${mode}: exited before it was ready:\n${logs.slice(-40).join("\n")}`);
    const ok = await fetch(`${url}/${API_VERSION}/config`, { headers: { authorization } }).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`${mode}: not ready within 180 s:\n${logs.slice(-40).join("\n")}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const launchToReadyMs = Date.now() - started;

  // With replicas the launcher is counted too: until issue 28's client-side balancing its
  // balancers carried every RPC, and a run against an older checkout still shows that cost.
  const pids = () => (mode === "split-replicas" ? [child.pid!, ...childrenOf(child.pid!)] : split ? childrenOf(child.pid!) : [child.pid!]);
  return {
    mode,
    url,
    database: fresh ? "Postgres" : "PGlite (in memory)",
    cache: fresh ? "Redis" : "in-process",
    databaseUrl: fresh?.url,
    authorization,
    launchToReadyMs,
    pids,
    async call(method, path, body, headers = {}) {
      const res = await fetch(`${url}/${API_VERSION}${path}`, {
        method,
        body: body === undefined ? undefined : JSON.stringify(body),
        headers: { authorization, ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    },
    async stop() {
      if (!exited) {
        const gone = new Promise((r) => child.once("exit", r));
        child.kill("SIGTERM");
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([gone, new Promise((r) => (timer = setTimeout(r, 20_000)))]);
        clearTimeout(timer);
        if (!exited) child.kill("SIGKILL");
      }
      await fresh?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Direct children of a process, from /proc (Linux). */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // pid (comm) state ppid …: comm may hold spaces and parentheses, so read after the last ")".
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === pid) out.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** Resident set size of a process, MiB (/proc/<pid>/status VmRSS). */
export function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0);
  return kb / 1024;
}

/** User + system CPU a process has used so far, seconds (/proc/<pid>/stat, 100 ticks a second). */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // After the comm: state(0) ppid(1) … utime(11) stime(12).
  return (Number(fields[11]) + Number(fields[12])) / 100;
}
