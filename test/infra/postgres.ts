import { spawnSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { freePort, stopWhenOwnerDies } from "./ports.js";

/**
 * A PostgreSQL server of a suite's own: `initdb` on a scratch folder, `pg_ctl` on a free loopback
 * port, stopped (and the folder deleted) at the end. A suite that restarts the database (the chaos
 * suite) uses this so the shared server on 127.0.0.1:5432 is never touched. As root, the server
 * runs as the `postgres` user (PostgreSQL refuses to run as root), in a folder that user owns.
 */
export interface OwnPostgres {
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  url: string;
  port: number;
  /**
   * Stops the server and starts it again on the same port and data. `immediate` is a crash (no
   * checkpoint, WAL recovery on start); `fast` a clean shutdown that ends every session.
   */
  restart(mode?: "immediate" | "fast"): Promise<void>;
  stop(): Promise<void>;
}

/** Where the PostgreSQL server binaries are (Debian puts them outside PATH), or null. */
export function postgresBinDir(): string | null {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, "bin", "initdb")) && existsSync(join(root, v, "bin", "pg_ctl")))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length ? join(root, versions[0]!, "bin") : null;
}

/** Why a server of one's own cannot be started here, or null when it can. */
export function ownPostgresUnavailableReason(): string | null {
  if (!postgresBinDir()) return "no PostgreSQL server binaries (initdb, pg_ctl) under /usr/lib/postgresql/*/bin";
  if (process.getuid?.() === 0 && !runAsUser()) return "running as root and there is no `postgres` user to run the server as";
  return null;
}

/** As root: the uid/gid of `postgres`; otherwise undefined (run as oneself). */
function runAsUser(): { uid: number; gid: number } | null | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const r = spawnSync("id", ["-u", "postgres"], { encoding: "utf8" });
  const g = spawnSync("id", ["-g", "postgres"], { encoding: "utf8" });
  if (r.status !== 0 || g.status !== 0) return null;
  return { uid: Number(r.stdout.trim()), gid: Number(g.stdout.trim()) };
}

function run(bin: string, args: string[], as: { uid: number; gid: number } | undefined): void {
  const r = spawnSync(bin, args, { encoding: "utf8", uid: as?.uid, gid: as?.gid, timeout: 120_000, cwd: tmpdir() });
  if (r.error || r.status !== 0) throw new Error(`${bin} ${args.join(" ")} failed (${r.status ?? r.error}): ${r.stderr || r.stdout}`);
}

/** Starts a fresh server. Its only role is `postgres`, trusted on loopback (a test server). */
export async function startOwnPostgres(): Promise<OwnPostgres> {
  const why = ownPostgresUnavailableReason();
  if (why) throw new Error(why);
  const bin = postgresBinDir()!;
  const as = runAsUser() ?? undefined;
  const dir = mkdtempSync(join(tmpdir(), "corridor-pg-"));
  const data = join(dir, "data");
  const socketDir = join(dir, "sock");
  if (as) chownSync(dir, as.uid, as.gid);
  chmodSync(dir, 0o700);
  const port = await freePort();
  const pgCtl = join(bin, "pg_ctl");
  // Settings for a throwaway server: no fsync (the data dies with the run); a crash restart still
  // replays the WAL. Sockets in the scratch folder only.
  const options = `-p ${port} -c listen_addresses=127.0.0.1 -k ${socketDir} -c fsync=off -c full_page_writes=off -c max_connections=200`;
  const start = () => run(pgCtl, ["start", "-D", data, "-w", "-t", "60", "-s", "-l", join(dir, "server.log"), "-o", options], as);
  try {
    run(join(bin, "initdb"), ["-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync", "--no-instructions"], as);
    run("/bin/mkdir", ["-p", socketDir], as);
    start();
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  // A run that is killed before its teardown leaves no server behind.
  // SIGQUIT to the postmaster is pg_ctl's immediate stop (the watchdog runs as this process's user).
  stopWhenOwnerDies(`kill -QUIT $(head -n1 ${shellQuote(join(data, "postmaster.pid"))})`, dir);
  await waitForConnection(url, 30_000);
  let stopped = false;
  return {
    url,
    port,
    async restart(mode = "immediate") {
      run(pgCtl, ["stop", "-D", data, "-m", mode, "-w", "-t", "60", "-s"], as);
      start();
      await waitForConnection(url, 30_000);
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      try {
        run(pgCtl, ["stop", "-D", data, "-m", "immediate", "-w", "-t", "60", "-s"], as);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

const shellQuote = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;

async function waitForConnection(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const c = new pg.Client({ connectionString: url });
    try {
      await c.connect();
      await c.query("select 1");
      return;
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`PostgreSQL at ${url} does not answer: ${String(err)}`);
    } finally {
      await c.end().catch(() => {});
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

