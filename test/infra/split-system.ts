import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { randomBytes } from "node:crypto";
import { SERVICE_NAMES, type ServiceName } from "@corridor/kit";
import { createFreshDatabase } from "./databases.js";

export interface SplitSystemInfo {
  url: string;
  /** Each service's own Connect address (h2c), for tests that look behind the gateway. */
  serviceUrls: Record<ServiceName, string>;
}

export async function freePortBlock(size: number): Promise<number> {
  // Find a base port whose next `size` ports are all free.
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 20_000 + Math.floor(Math.random() * 20_000);
    let ok = true;
    for (let p = base; p <= base + size && ok; p++) ok = await isFree(p);
    if (ok) return base;
  }
  throw new Error("no free port block");
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolveFree) => {
    const s = createServer();
    s.once("error", () => resolveFree(false));
    s.listen(port, "127.0.0.1", () => s.close(() => resolveFree(true)));
  });
}

/**
 * Runs the real `start:split` launcher (one process per service + the gateway) against a fresh
 * Postgres database, Redis and Kafka (with a unique topic prefix), and waits for its ready line.
 */
export async function startSplitSystem(
  env: { DATABASE_URL: string; REDIS_URL: string; KAFKA_BROKERS: string },
  extraEnv: Record<string, string> = {},
  /** Every line the processes write (their logs, prefixed with the process's name), as it comes. */
  onLine?: (line: string) => void,
) {
  const db = await createFreshDatabase(env.DATABASE_URL, "corridor_split", { migrated: true });
  const base = await freePortBlock(8);
  const httpPort = base + 8;
  const root = resolve(import.meta.dirname, "../..");
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", join(root, "scripts/start-split.ts")], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: db.url,
      REDIS_URL: env.REDIS_URL,
      KAFKA_BROKERS: env.KAFKA_BROKERS,
      KAFKA_TOPIC_PREFIX: `e2e-${randomBytes(4).toString("hex")}.`,
      CORRIDOR_HTTP_PORT: String(httpPort),
      CORRIDOR_SPLIT_PORT_BASE: String(base),
      CORRIDOR_DATA_DIR: mkdtempSync(join(tmpdir(), "corridor-split-")),
      LOG_LEVEL: process.env.LOG_LEVEL ?? "warn",
      // The sources, as a developer runs them: no build step before the suite (the container suite runs the compiled code).
      CORRIDOR_SPLIT_RUNTIME: "tsx",
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
    const timer = setTimeout(() => reject(new Error(`split system not ready in time:\n${logs.slice(-60).join("\n")}`)), 150_000);
    createInterface({ input: child.stdout! }).on("line", (line) => {
      onLine?.(line);
      if (line.startsWith("CORRIDOR_READY ")) {
        clearTimeout(timer);
        resolveReady(JSON.parse(line.slice("CORRIDOR_READY ".length)));
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`split launcher exited with ${code}:\n${logs.slice(-60).join("\n")}`));
    });
  });
  return {
    // start-split.ts puts the services on base+1 .. base+7 in SERVICE_NAMES order.
    info: {
      url: ready.url,
      serviceUrls: Object.fromEntries(SERVICE_NAMES.map((name, i) => [name, `http://127.0.0.1:${base + 1 + i}`])) as Record<ServiceName, string>,
    } satisfies SplitSystemInfo,
    async stop() {
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([exited, new Promise((r) => (timer = setTimeout(r, 20_000)))]);
      clearTimeout(timer);
      child.kill("SIGKILL");
      await db.drop();
    },
  };
}
