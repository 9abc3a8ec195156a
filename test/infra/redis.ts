import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, stopWhenOwnerDies } from "./ports.js";

/**
 * A redis-server of a suite's own on a free loopback port, so a suite that restarts Redis (the
 * chaos suite) never touches the shared one. No persistence: like a cache restarted in place, a
 * restart loses every key.
 */
export interface OwnRedis {
  /** redis://127.0.0.1:<port> */
  url: string;
  port: number;
  /** Kills the server (SIGKILL) and starts a new one on the same port, empty. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** Why a server of one's own cannot be started here, or null when it can. */
export function ownRedisUnavailableReason(): string | null {
  const r = spawnSync("redis-server", ["--version"], { stdio: "ignore" });
  return r.error ? "redis-server is not on PATH" : null;
}

export async function startOwnRedis(): Promise<OwnRedis> {
  const why = ownRedisUnavailableReason();
  if (why) throw new Error(why);
  const dir = mkdtempSync(join(tmpdir(), "corridor-redis-"));
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    const c = spawn("redis-server", ["--bind", "127.0.0.1", "--port", String(port), "--save", "", "--appendonly", "no", "--dir", dir, "--logfile", join(dir, "redis.log")], {
      stdio: "ignore",
    });
    child = c;
    await waitForPing(port, c, 20_000);
    // For the watchdog: the pid of the server running now.
    spawnSync("/bin/sh", ["-c", `echo ${c.pid} > "$1"`, "sh", join(dir, "pid")]);
  };
  const kill = async () => {
    const c = child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise((r) => c.once("exit", r));
    c.kill("SIGKILL");
    await exited;
  };
  try {
    await start();
  } catch (err) {
    await kill();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  stopWhenOwnerDies(`kill -KILL $(cat "$1/pid")`, dir);
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    async restart() {
      await kill();
      await start();
    },
    async stop() {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Polls PING until the server answers PONG (bounded), failing early when it exits. */
async function waitForPing(port: number, c: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (c.exitCode !== null) throw new Error(`redis-server exited with ${c.exitCode}`);
    if (await ping(port)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`redis-server did not answer on 127.0.0.1:${port} within ${timeoutMs} ms`);
}

function ping(port: number): Promise<boolean> {
  return new Promise((resolvePing) => {
    const s = connect({ host: "127.0.0.1", port });
    const done = (ok: boolean) => {
      s.destroy();
      resolvePing(ok);
    };
    s.setTimeout(500, () => done(false));
    s.on("connect", () => s.write("PING\r\n"));
    s.on("data", (d) => done(d.toString().startsWith("+PONG")));
    s.on("error", () => done(false));
  });
}
