import { execFile, spawn } from "node:child_process";
import { promisify } from "node:util";
import { createFreshDatabase } from "../infra/databases.js";
import { runLoad, type LoadSummary } from "./load.js";

/**
 * The anchors `npm run bench:compare` measures in the same run as Corridor, so that a figure is
 * read as a ratio to what this machine does at that moment (it is shared and noisy):
 * - PostgreSQL itself: pgbench's built-in TPC-B-like transaction (3 updates, 1 select, 1 insert,
 *   one commit) on a scratch database at scale 10;
 * - Node itself: a bare node:http server answering "hello", in a process of its own, driven by the
 *   same load generator (autocannon in a worker thread) as Corridor.
 */

const exec = promisify(execFile);

export interface PgbenchResult {
  clients: number;
  tps: number;
  /** Mean latency, ms (pgbench's "latency average"). */
  meanMs: number;
}

/** A scratch database initialised at scale 10, for the pgbench runs of one benchmark; dropped by `drop`. */
export async function preparePgbench(databaseUrl: string): Promise<{ url: string; run(clients: number, seconds: number): Promise<PgbenchResult>; drop(): Promise<void> }> {
  const db = await createFreshDatabase(databaseUrl, "corridor_pgbench");
  await exec("pgbench", ["-i", "-q", "-s", "10", db.url], { maxBuffer: 16 << 20 });
  return {
    url: db.url,
    async run(clients, seconds) {
      const { stdout } = await exec("pgbench", ["-n", "-c", String(clients), "-j", String(Math.min(clients, 2)), "-T", String(seconds), db.url], { maxBuffer: 16 << 20 });
      const tps = Number(/tps = ([\d.]+) \(without initial connection time\)/.exec(stdout)?.[1]);
      const meanMs = Number(/latency average = ([\d.]+) ms/.exec(stdout)?.[1]);
      if (!Number.isFinite(tps) || !Number.isFinite(meanMs)) throw new Error(`pgbench: cannot read its result:\n${stdout}`);
      const failed = Number(/number of failed transactions: (\d+)/.exec(stdout)?.[1] ?? 0);
      if (failed > 0) throw new Error(`pgbench: ${failed} failed transactions`);
      return { clients, tps, meanMs };
    },
    drop: () => db.drop(),
  };
}

/** The bare node:http hello-world (also run by test/bench/floor.ts). */
export const HELLO_SERVER = `
const http = require("node:http");
const server = http.createServer((req, res) => { res.setHeader("content-type", "text/plain"); res.end("hello"); });
server.keepAliveTimeout = 60000;
server.listen(0, "127.0.0.1", () => process.stdout.write(server.address().port + "\\n"));
`;

/** A bare node:http hello-world in its own process, under the same load generator as Corridor. */
export async function measureBareNode(connections: number, seconds: number, warmupSeconds: number): Promise<LoadSummary> {
  const child = spawn(process.execPath, ["-e", HELLO_SERVER], { stdio: ["ignore", "pipe", "inherit"] });
  try {
    const port = await new Promise<number>((resolve, reject) => {
      child.stdout!.once("data", (d) => resolve(Number(String(d).trim())));
      child.once("exit", (code) => reject(new Error(`hello server exited with ${code}`)));
    });
    const job = { url: `http://127.0.0.1:${port}`, method: "GET" as const, path: "/", headers: {}, uniqueIdempotencyKey: false, connections };
    if (warmupSeconds > 0) await runLoad({ ...job, durationSeconds: warmupSeconds });
    return await runLoad({ ...job, durationSeconds: seconds });
  } finally {
    child.kill("SIGKILL");
  }
}
