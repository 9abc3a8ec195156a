// `npm run bench:image`: the image's size and its start-to-ready time, each against an anchor
// measured in the same run (docs/benchmarks.md, "Image"). Needs a Docker engine and the image
// (`npm run image -- --local-base` first, or CORRIDOR_IMAGE); every container runs with
// `--network host` and listens on 127.0.0.1 only.
//
//   anchor     a bare `node -e` HTTP hello in a container of the base image: start to first 200
//   embedded   the image's default (gateway + every service, PGlite in a fresh /data): start to
//              /readyz 200 and the bootstrap credentials answering GET /config (a first start:
//              PGlite's initdb and every migration included)
//   host       the same embedded system on this machine, `node dist/app/corridor.mjs` (compiled)
//              and `tsx embedded/src/main.ts` (development), with a fresh data folder each time
//
// BENCH_RUNS (default 5) runs of each, interleaved; prints medians and min–max as markdown.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { freePort } from "@corridor/testcontainers";

const root = resolve(import.meta.dirname, "../..");
const image = process.env.CORRIDOR_IMAGE || "corridor:0.1.0";
const runs = Number(process.env.BENCH_RUNS ?? 5);
const ID = "plat_bench_image";
const SECRET = "bench-image-secret-0123456789";
const auth = `Basic ${Buffer.from(`${ID}:${SECRET}`).toString("base64")}`;

function docker(args: string[]): string {
  const r = spawnSync("docker", args, { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`docker ${args.join(" ")}: ${r.stderr}`);
  return r.stdout.trim();
}

async function status(url: string, headers: Record<string, string> = {}): Promise<number | undefined> {
  try {
    const res = await fetch(url, { headers, signal: AbortSignal.timeout(2_000) });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return undefined;
  }
}

async function until(check: () => Promise<boolean>, what: string, ms = 180_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not ready in ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const embeddedReady = (port: number) => async () =>
  (await status(`http://127.0.0.1:${port}/readyz`)) === 200 && (await status(`http://127.0.0.1:${port}/2025-10-13/config`, { authorization: auth })) === 200;

/** Milliseconds from `docker run` to `ready`, then the container is removed. */
async function timeContainer(args: string[], ready: () => Promise<boolean>, what: string): Promise<number> {
  const name = `corridor-bench-${process.pid}-${Date.now().toString(36)}`;
  const t0 = performance.now();
  docker(["run", "-d", "--rm", "--name", name, "--network", "host", ...args]);
  try {
    await until(ready, what);
    return performance.now() - t0;
  } finally {
    spawnSync("docker", ["rm", "-f", name], { stdio: "ignore" });
  }
}

async function anchor(base: string): Promise<number> {
  const port = await freePort();
  const hello = `require("http").createServer((q, s) => s.end("ok")).listen(${port}, "127.0.0.1")`;
  return timeContainer(["--entrypoint", "node", base, "-e", hello], async () => (await status(`http://127.0.0.1:${port}/`)) === 200, "anchor");
}

async function embeddedContainer(): Promise<number> {
  const [http, internal] = [await freePort(), await freePort()];
  const env = { CORRIDOR_HTTP_HOST: "127.0.0.1", CORRIDOR_HTTP_PORT: http, CORRIDOR_INTERNAL_PORT: internal, CORRIDOR_BOOTSTRAP_CLIENT_ID: ID, CORRIDOR_BOOTSTRAP_CLIENT_SECRET: SECRET, LOG_LEVEL: "warn" };
  return timeContainer([...Object.entries(env).flatMap(([k, v]) => ["-e", `${k}=${v}`]), image], embeddedReady(http), "embedded container");
}

async function embeddedHost(command: string[]): Promise<number> {
  const [http, internal] = [await freePort(), await freePort()];
  const data = mkdtempSync(join(tmpdir(), "corridor-bench-image-"));
  const t0 = performance.now();
  // PGlite, the in-process bus and cache: the same system the container runs.
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const key of ["DATABASE_URL", "KAFKA_BROKERS", "REDIS_URL"]) delete env[key];
  const logFile = join(data, "..", `${data.split("/").pop()}.log`);
  const log = openSync(logFile, "w");
  const child: ChildProcess = spawn(command[0]!, command.slice(1), {
    cwd: root,
    stdio: ["ignore", log, log],
    env: {
      ...env,
      CORRIDOR_HTTP_HOST: "127.0.0.1",
      CORRIDOR_HTTP_PORT: String(http),
      CORRIDOR_INTERNAL_PORT: String(internal),
      CORRIDOR_DATA_DIR: data,
      CORRIDOR_BOOTSTRAP_CLIENT_ID: ID,
      CORRIDOR_BOOTSTRAP_CLIENT_SECRET: SECRET,
      LOG_LEVEL: "warn",
    },
  });
  try {
    await until(embeddedReady(http), command.join(" ")).catch((err: Error) => {
      throw new Error(`${err.message}; its output:\n${readFileSync(logFile, "utf8").slice(-3000)}`);
    });
    return performance.now() - t0;
  } finally {
    closeSync(log);
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
    child.kill("SIGKILL");
    rmSync(data, { recursive: true, force: true });
    rmSync(logFile, { force: true });
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const fmt = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

const inspect = JSON.parse(docker(["image", "inspect", image]))[0];
const base: string = process.env.CORRIDOR_BASE_IMAGE || "corridor-local-base:node20";
const baseSize = Number(docker(["image", "inspect", "-f", "{{.Size}}", base]));
const compiled = join(root, "dist/app/corridor.mjs");

const series: Record<string, number[]> = { anchor: [], container: [], hostCompiled: [], hostTsx: [] };
for (let i = 0; i < runs; i++) {
  series.anchor!.push(await anchor(base));
  series.container!.push(await embeddedContainer());
  if (existsSync(compiled)) series.hostCompiled!.push(await embeddedHost([process.execPath, compiled]));
  series.hostTsx!.push(await embeddedHost([process.execPath, "--import", "tsx", "embedded/src/main.ts"]));
  process.stderr.write(`[bench:image] run ${i + 1}/${runs} done\n`);
}

const a = median(series.anchor!);
const row = (label: string, xs: number[]) =>
  xs.length ? `| ${label} | ${fmt(median(xs))} | ${fmt(Math.min(...xs))}–${fmt(Math.max(...xs))} | ${(median(xs) / a).toFixed(1)}× |` : `| ${label} | not run | | |`;
console.log(`Image ${image} (${inspect.Id.slice(7, 19)}) on ${base}: ${(inspect.Size / 1e6).toFixed(0)} MB in all, ${((inspect.Size - baseSize) / 1e6).toFixed(0)} MB above the base (${(baseSize / 1e6).toFixed(0)} MB).`);
console.log("");
console.log(`| start to ready (${runs} runs) | median | min–max | × anchor |`);
console.log("| --- | ---: | ---: | ---: |");
console.log(row("anchor: `node -e` HTTP hello, container of the base image", series.anchor!));
console.log(row("embedded, container of the image (first start: initdb + migrations)", series.container!));
console.log(row("embedded on the host, `node dist/app/corridor.mjs` (compiled)", series.hostCompiled!));
console.log(row("embedded on the host, `tsx embedded/src/main.ts` (development)", series.hostTsx!));
