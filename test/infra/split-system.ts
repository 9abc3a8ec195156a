import { spawn, type ChildProcess } from "node:child_process";
import { EventEmitter } from "node:events";
import { mkdtempSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { randomBytes } from "node:crypto";
import { SERVICE_NAMES, splitReplicaPort, type ServiceName } from "@corridor/kit";
import { createFreshDatabase } from "./databases.js";

export interface SplitSystemInfo {
  url: string;
  /**
   * Each service's Connect address (h2c), for tests that look behind the gateway: its URL setting
   * as the processes get it, with replicas their base URLs comma-separated (give it to the kit's
   * createServiceTransport, which calls them in turn).
   */
  serviceUrls: Record<ServiceName, string>;
  /** The topic prefix of this system on the shared broker, for a deployable a test runs beside it (a rail connector). */
  kafkaTopicPrefix: string;
  /** KAFKA_TOPIC_PARTITIONS of this system's processes (the same for a deployable run beside it). */
  kafkaTopicPartitions: number;
}

/**
 * A base port whose next `size` ports are all free, below the kernel's ephemeral range: a port
 * in that range can be taken between this check and a child's listen by any outgoing connection
 * on the machine (its local port), which once failed a whole CI run with EADDRINUSE.
 */
export async function freePortBlock(size: number): Promise<number> {
  const low = 20_000;
  const high = ephemeralRangeStart() - size - 1;
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = low + Math.floor(Math.random() * (high - low));
    let ok = true;
    for (let p = base; p <= base + size && ok; p++) ok = await isFree(p);
    if (ok) return base;
  }
  throw new Error("no free port block");
}

/** The first port of the kernel's ephemeral range (Linux's default 32768 where it cannot be read). */
function ephemeralRangeStart(): number {
  try {
    const first = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
    // A range that leaves no room below it (an unusual kernel setting) keeps the default's room.
    return Number.isInteger(first) && first > 24_000 ? first : 32_768;
  } catch {
    return 32_768;
  }
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolveFree) => {
    const s = createServer();
    s.once("error", () => resolveFree(false));
    s.listen(port, "127.0.0.1", () => s.close(() => resolveFree(true)));
  });
}

/** The arguments of startSplitSystem, passed as they are to each launch it tries. */
type SplitLaunchArgs = Parameters<typeof launchSplitSystem>;

/**
 * Runs the real `start:split` launcher (one process per service + the gateway) against a fresh
 * Postgres database, Redis and Kafka (with a unique topic prefix), and waits for its ready line.
 */
export async function startSplitSystem(...args: SplitLaunchArgs): ReturnType<typeof launchSplitSystem> {
  // The port block is checked free before the launch, but another suite's system or any process
  // on the machine may bind one of its ports before a child does; a launch that failed on that
  // alone is tried again on another block (a fresh database each time), a few times at most.
  for (let attempt = 1; ; attempt++) {
    try {
      return await launchSplitSystem(...args);
    } catch (err) {
      if (!(err instanceof PortTakenError) || attempt >= 3) throw err;
      console.warn(`[split-system] a port of the block was taken before its process bound it; launching again (${attempt}/3)`);
    }
  }
}

/** The launcher exited before ready because a process found its port taken (EADDRINUSE). */
class PortTakenError extends Error {}

async function launchSplitSystem(
  env: { DATABASE_URL: string; REDIS_URL: string; KAFKA_BROKERS: string },
  extraEnv: Record<string, string> = {},
  /** Every line the processes write (their logs, prefixed with the process's name), as it comes. */
  onLine?: (line: string) => void,
  opts: {
    /**
     * Copy the run's migrated template database (test/infra/template-setup.ts) when there is one;
     * false for a Postgres server of the caller's own, where that template does not exist (the
     * services then migrate the empty database as they start).
     */
    fromTemplate?: boolean;
    /** How long to wait for the ready line (default 150 s). */
    readyTimeoutMs?: number;
  } = {},
) {
  const db = await createFreshDatabase(env.DATABASE_URL, "corridor_split", { migrated: opts.fromTemplate ?? true });
  /** The pid of each process the launcher runs now, by name (it announces each start and restart). */
  const pids = new Map<string, number>();
  const started = new EventEmitter<{ process: [name: string, pid: number] }>();
  // Replica 1 of service i listens on base + 1 + i, replica r > 1 on base + 10 r + 1 + i (splitReplicaPort).
  const replicas = Number(extraEnv.CORRIDOR_SPLIT_REPLICAS ?? 1);
  const base = await freePortBlock(replicas > 1 ? 10 * replicas + 8 : 8);
  const httpPort = base + 8;
  const root = resolve(import.meta.dirname, "../..");
  const kafkaTopicPrefix = extraEnv.KAFKA_TOPIC_PREFIX ?? `e2e-${randomBytes(4).toString("hex")}.`;
  // Fewer than production's 12 (every run leaves its topics on the shared broker), but more than
  // one, so the suites run on partitioned topics.
  const kafkaTopicPartitions = Number(extraEnv.KAFKA_TOPIC_PARTITIONS ?? 4);
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", join(root, "scripts/start-split.ts")], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: db.url,
      REDIS_URL: env.REDIS_URL,
      KAFKA_BROKERS: env.KAFKA_BROKERS,
      KAFKA_TOPIC_PREFIX: kafkaTopicPrefix,
      KAFKA_TOPIC_PARTITIONS: String(kafkaTopicPartitions),
      CORRIDOR_HTTP_PORT: String(httpPort),
      CORRIDOR_SPLIT_PORT_BASE: String(base),
      CORRIDOR_DATA_DIR: mkdtempSync(join(tmpdir(), "corridor-split-")),
      LOG_LEVEL: process.env.LOG_LEVEL ?? "warn",
      // The sources, as a developer runs them: no build step before the suite (the container suite runs the compiled code).
      CORRIDOR_SPLIT_RUNTIME: "tsx",
      // Readiness is a gate, not a measurement: a shared machine may start eight processes slowly,
      // and twice the processes start on the same cores with replicas (the launcher's own bound).
      CORRIDOR_READY_TIMEOUT_MS: process.env.CORRIDOR_READY_TIMEOUT_MS ?? String(240_000 * replicas),
      ...extraEnv,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const logs: string[] = [];
  createInterface({ input: child.stderr! }).on("line", (l) => {
    onLine?.(l);
    logs.push(l);
    if (logs.length > 400) logs.shift();
  });
  const ready = await new Promise<{ url: string }>((resolveReady, reject) => {
    // The launcher's own deadline (CORRIDOR_READY_TIMEOUT_MS, 240 s per replica here) plus a margin.
    const launcherMs = Number(extraEnv.CORRIDOR_READY_TIMEOUT_MS ?? process.env.CORRIDOR_READY_TIMEOUT_MS) || 240_000 * replicas;
    const timer = setTimeout(
      () => reject(new Error(`split system not ready in time:\n${logs.slice(-60).join("\n")}`)),
      opts.readyTimeoutMs ?? (replicas > 1 ? 60_000 + 240_000 * replicas : Math.max(150_000, launcherMs + 30_000)),
    );
    createInterface({ input: child.stdout! }).on("line", (line) => {
      onLine?.(line);
      if (line.startsWith("CORRIDOR_PROCESS ")) {
        const { name, pid } = JSON.parse(line.slice("CORRIDOR_PROCESS ".length)) as { name: string; pid: number };
        pids.set(name, pid);
        started.emit("process", name, pid);
      }
      if (line.startsWith("CORRIDOR_READY ")) {
        clearTimeout(timer);
        resolveReady(JSON.parse(line.slice("CORRIDOR_READY ".length)));
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      const message = `split launcher exited with ${code}:\n${logs.slice(-60).join("\n")}`;
      reject(logs.some((l) => l.includes("EADDRINUSE")) ? new PortTakenError(message) : new Error(message));
    });
  }).catch(async (err: unknown) => {
    // Nothing uses this system: the launcher stops its processes (SIGTERM) and the database goes.
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([exited, new Promise((r) => (timer = setTimeout(r, 20_000)))]);
      clearTimeout(timer);
      child.kill("SIGKILL");
    }
    await db.drop().catch(() => undefined);
    throw err;
  });
  // A launcher that exits while the suites use it (a process died: e2e keeps restarts off) leaves
  // them with refused connections only; its last lines say which process and why.
  let stopping = false;
  child.once("exit", (code, signal) => {
    if (stopping) return;
    console.error(`[split-system] the launcher exited (${code ?? signal}) while its system was in use; its last lines:\n${logs.slice(-80).join("\n")}`);
  });
  return {
    // Where start-split.ts puts each replica of each service (splitReplicaPort).
    info: {
      url: ready.url,
      serviceUrls: Object.fromEntries(
        SERVICE_NAMES.map((name) => [name, Array.from({ length: replicas }, (_, r) => `http://127.0.0.1:${splitReplicaPort(base, name, r + 1)}`).join(",")]),
      ) as Record<ServiceName, string>,
      kafkaTopicPrefix,
      kafkaTopicPartitions,
    } satisfies SplitSystemInfo,
    /** The system's database (a rail connector's schema is in it too), for tests that look at a process's tables. */
    databaseUrl: db.url,
    /** The pid of a process the launcher runs now (a service's name, "gateway", a connector's process, or with replicas `ledger#2`). */
    pidOf(name: ServiceName | "gateway" | `connector-${string}` | `${ServiceName}#${number}`): number {
      const pid = pids.get(name);
      if (pid === undefined) throw new Error(`the launcher announced no ${name} process`);
      return pid;
    },
    /** Resolves with the pid of the next start of `name` after `afterPid` (a restart by the launcher). */
    nextStart(name: ServiceName | "gateway" | `connector-${string}` | `${ServiceName}#${number}`, afterPid: number, timeoutMs: number): Promise<number> {
      return new Promise((resolveStart, reject) => {
        const current = pids.get(name);
        if (current !== undefined && current !== afterPid) return resolveStart(current);
        const timer = setTimeout(() => {
          started.off("process", onStart);
          reject(new Error(`the launcher did not restart ${name} within ${timeoutMs} ms:\n${logs.slice(-40).join("\n")}`));
        }, timeoutMs);
        const onStart = (n: string, pid: number) => {
          if (n !== name || pid === afterPid) return;
          clearTimeout(timer);
          started.off("process", onStart);
          resolveStart(pid);
        };
        started.on("process", onStart);
      });
    },
    /** The launcher's last lines (its own and every process's logs), for a failure's message. */
    recentLogs: (n = 60) => logs.slice(-n).join("\n"),
    /** Stops every process and drops the database, unless `keepDatabase` (its URL is `databaseUrl`). */
    async stop(opts: { keepDatabase?: boolean } = {}) {
      stopping = true;
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([exited, new Promise((r) => (timer = setTimeout(r, 20_000)))]);
      clearTimeout(timer);
      child.kill("SIGKILL");
      if (!opts.keepDatabase) await db.drop();
    },
  };
}
