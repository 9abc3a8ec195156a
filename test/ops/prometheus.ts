import { execFileSync, spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";

/**
 * Debian's Prometheus (`apt-get install prometheus`, which brings promtool) for the ops suites:
 * installed when missing and the test runs as root; without it the suites skip and say why,
 * except in CI (CI=true), where a missing Prometheus fails them.
 */
export function ensurePrometheus(): { ok: true } | { ok: false; reason: string } {
  const have = () => spawnSync("prometheus", ["--version"]).status === 0 && spawnSync("promtool", ["--version"]).status === 0;
  if (have()) return { ok: true };
  if (process.getuid?.() !== 0) return { ok: false, reason: "Debian's prometheus package is not installed and the tests do not run as root to install it (apt-get install -y prometheus)" };
  const apt = (args: string[]) => spawnSync("apt-get", args, { encoding: "utf8", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" }, timeout: 300_000 });
  let res = apt(["install", "-y", "--no-install-recommends", "prometheus"]);
  // A fresh machine may have no package lists yet.
  if (res.status !== 0) {
    apt(["update", "-qq"]);
    res = apt(["install", "-y", "--no-install-recommends", "prometheus"]);
  }
  if (res.status !== 0 || !have()) return { ok: false, reason: `apt-get install -y prometheus failed: ${(res.stderr || res.error?.message || "").slice(-400)}` };
  return { ok: true };
}

/** Fails in CI, skips elsewhere: the reason a suite cannot run, or undefined. */
export function prometheusSkipReason(): string | undefined {
  const found = ensurePrometheus();
  if (found.ok) return undefined;
  if (process.env.CI === "true") throw new Error(`CI=true and ${found.reason}`);
  return found.reason;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export interface ScrapeJob {
  /** The job label (the process: gateway, ledger, …). */
  job: string;
  target: string;
}

export interface PromSample {
  metric: Record<string, string>;
  value: [number, string];
}

export interface RunningPrometheus {
  url: string;
  /** An instant query; throws on a query error (bad PromQL, unknown function). */
  query(expr: string): Promise<PromSample[]>;
  /** Polls `expr` until `accept` holds for its result, at most `ms`. */
  waitFor(expr: string, accept: (r: PromSample[]) => boolean, ms?: number): Promise<PromSample[]>;
  /** The alerts Prometheus evaluates now (rules loaded from `ruleFiles`). */
  alerts(): Promise<{ labels: Record<string, string>; state: string }[]>;
  stop(): Promise<void>;
}

/**
 * Starts `prometheus` on a loopback port with a scratch data dir and a generated scrape config:
 * one job per process, scraped every second; rule files evaluated every second too.
 */
export async function startPrometheus(jobs: ScrapeJob[], ruleFiles: string[] = []): Promise<RunningPrometheus> {
  const dir = mkdtempSync(join(tmpdir(), "corridor-prom-"));
  const port = await freePort();
  const config = [
    "global:",
    "  scrape_interval: 1s",
    "  scrape_timeout: 1s",
    "  evaluation_interval: 1s",
    ...(ruleFiles.length ? ["rule_files:", ...ruleFiles.map((f) => `  - ${JSON.stringify(f)}`)] : []),
    "scrape_configs:",
    ...jobs.flatMap((j) => [`  - job_name: ${JSON.stringify(j.job)}`, "    static_configs:", `      - targets: [${JSON.stringify(j.target)}]`]),
  ].join("\n");
  writeFileSync(join(dir, "prometheus.yml"), `${config}\n`);
  execFileSync("promtool", ["check", "config", join(dir, "prometheus.yml")], { stdio: "pipe" });
  const child: ChildProcess = spawn(
    "prometheus",
    [
      `--config.file=${join(dir, "prometheus.yml")}`,
      `--storage.tsdb.path=${join(dir, "data")}`,
      `--web.listen-address=127.0.0.1:${port}`,
      "--storage.tsdb.retention.time=1h",
      "--log.level=warn",
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  const logs: string[] = [];
  for (const s of [child.stdout!, child.stderr!]) createInterface({ input: s }).on("line", (l) => logs.push(l));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`prometheus exited with ${child.exitCode}:\n${logs.join("\n")}`);
    try {
      if ((await fetch(`${url}/-/ready`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`prometheus not ready in 30 s:\n${logs.join("\n")}`);
    await new Promise((r) => setTimeout(r, 200));
  }

  const query = async (expr: string): Promise<PromSample[]> => {
    const res = await fetch(`${url}/api/v1/query?${new URLSearchParams({ query: expr })}`);
    const body = (await res.json()) as { status: string; error?: string; data?: { resultType: string; result: PromSample[] } };
    if (body.status !== "success") throw new Error(`query ${expr} failed: ${body.error}`);
    return body.data!.resultType === "vector" ? body.data!.result : [];
  };
  return {
    url,
    query,
    async waitFor(expr, accept, ms = 60_000) {
      const end = Date.now() + ms;
      let last: PromSample[] = [];
      for (;;) {
        last = await query(expr);
        if (accept(last)) return last;
        if (Date.now() > end) throw new Error(`${expr} did not reach the expected value in ${ms} ms; last: ${JSON.stringify(last)}`);
        await new Promise((r) => setTimeout(r, 500));
      }
    },
    async alerts() {
      const body = (await (await fetch(`${url}/api/v1/alerts`)).json()) as { data: { alerts: { labels: Record<string, string>; state: string }[] } };
      return body.data.alerts;
    },
    async stop() {
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([exited, new Promise((r) => (timer = setTimeout(r, 10_000)))]);
      clearTimeout(timer);
      if (child.exitCode === null) child.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The numeric value of a one-sample result (NaN when empty). */
export const valueOf = (r: PromSample[]): number => (r[0] ? Number(r[0].value[1]) : Number.NaN);
