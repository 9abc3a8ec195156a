// `npm run start:split`: one process per service plus the gateway, on localhost, against real
// Postgres (DATABASE_URL), Redis (REDIS_URL) and Kafka (KAFKA_BROKERS). Prints the base URL and
// sandbox credentials once the gateway reports every service ready; stops everything on Ctrl-C.
// A process that dies is started again after a back-off, as Kubernetes restarts a container
// (CORRIDOR_SPLIT_RESTART_*; docs/operations.md, "Chaos suite and recovery times").
// `--replicas N` (or CORRIDOR_SPLIT_REPLICAS) runs N processes of every service; every process is
// given each service's replicas as a list (CORRIDOR_<SERVICE>_URL, comma-separated) and calls them
// in turn itself (docs/architecture.md, "Replicas").
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { connect } from "node:net";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { SERVICE_NAMES, createServiceTransport, env, loadConfig, serviceUrlEnvKey, splitReplicaPort, z, type ServiceName } from "@corridor/kit";
import { banner, ensureSandboxPlatform, readyInfo } from "@corridor/embedded/bootstrap";
import { ConnectorSetupError, checkConnectorSettings, connectorDefinitions, splitConnectorPort } from "@corridor/embedded/connectors";
import { restartDelayMs } from "./split-restart.js";

const config = loadConfig(
  z.object({
    DATABASE_URL: z.string({ message: "split mode needs DATABASE_URL (Postgres)" }),
    REDIS_URL: z.string({ message: "split mode needs REDIS_URL" }),
    KAFKA_BROKERS: z.string({ message: "split mode needs KAFKA_BROKERS" }),
    /** Port of the gateway's REST API. */
    CORRIDOR_HTTP_PORT: env.port(8080),
    /** Services listen on base+1 .. base+7 (auth-sessions, ledger, quotes-fx, agents, customers-kyc, notifications, sandbox). */
    CORRIDOR_SPLIT_PORT_BASE: env.port(8100),
    /** Where the bootstrap credentials file is kept. */
    CORRIDOR_DATA_DIR: z.string().default("./.data"),
    CORRIDOR_BOOTSTRAP_CLIENT_ID: z.string().optional(),
    CORRIDOR_BOOTSTRAP_CLIENT_SECRET: z.string().optional(),
    /** How long to wait for every service to become ready. */
    CORRIDOR_READY_TIMEOUT_MS: env.int(90_000),
    /**
     * What each process runs: `dist`, the compiled JavaScript `npm run build` writes to dist/app/bin
     * (what `npm run start:split`, the image and the chart run: no TypeScript compiler in the
     * process); `tsx`, the TypeScript sources (development and the end-to-end suite, no build step).
     */
    CORRIDOR_SPLIT_RUNTIME: z.enum(["dist", "tsx"]).default("dist"),
    /** Where `npm run build` wrote the compiled app for the `dist` runtime (relative to the repository root, or absolute). */
    CORRIDOR_SPLIT_DIST_DIR: z.string().default("dist"),
    /** Extra Node flags for every process, space-separated (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`, which NODE_OPTIONS refuses). */
    CORRIDOR_SPLIT_NODE_ARGS: z.string().default(""),
    /**
     * Each process's young generation, MB per semi-space (`--max-semi-space-size`); 0 leaves V8's
     * own (16 on 64-bit). V8 grows it to the maximum while a process starts and keeps it, mostly
     * empty, when idle: about 25 MB of each process's idle memory (docs/benchmarks.md, "Start-up
     * and memory").
     */
    CORRIDOR_SPLIT_SEMI_SPACE_MB: env.int(8),
    /** Restarts in a row of a process that keeps dying before the runner gives up and stops everything; 0: any exit stops everything. */
    CORRIDOR_SPLIT_RESTART_LIMIT: z.coerce.number().int().min(0).default(5),
    /** Wait before the first restart of a dead process; doubles on each restart in a row. */
    CORRIDOR_SPLIT_RESTART_BACKOFF_MS: z.coerce.number().int().min(0).default(1_000),
    /** Ceiling of that doubling wait. */
    CORRIDOR_SPLIT_RESTART_BACKOFF_MAX_MS: z.coerce.number().int().min(0).default(30_000),
    /** A process that stayed up this long before it died counts as healthy: its restarts in a row start again from 0. */
    CORRIDOR_SPLIT_RESTART_RESET_MS: z.coerce.number().int().min(0).default(60_000),
    /**
     * Give every process a Prometheus scrape endpoint: the gateway's METRICS_PORT is this, the
     * services' this+1 .. this+7 (in the order of CORRIDOR_SPLIT_PORT_BASE). 0 (default): none.
     */
    CORRIDOR_SPLIT_METRICS_PORT_BASE: env.port(0),
    /** Rail connectors to run, each as its own process (`corridor connector <name>`), comma-separated: the same setting as embedded mode's. */
    CORRIDOR_CONNECTORS: env.list(),
    /**
     * Each connector process's port (its PORT: grpc.health.v1 and the operator's
     * ConnectorAdminService, `npm run admin -- --connector-url`): this + the connector's fixed
     * index, whichever connectors run (ach-nacha this, sepa this+1). Clear of the services' ports
     * and of their replicas' (CORRIDOR_SPLIT_PORT_BASE + 1 .. + 97).
     */
    CORRIDOR_SPLIT_CONNECTOR_PORT_BASE: env.port(8200),
    /**
     * Processes of every service (the gateway stays one). Replica 1 listens on the service's port
     * (CORRIDOR_SPLIT_PORT_BASE + 1 ..), replica r > 1 on CORRIDOR_SPLIT_PORT_BASE + 10 r + 1 ..;
     * every process calls a service's replicas in turn (its CORRIDOR_<SERVICE>_URL lists them), and
     * their consumers share each topic's partitions (KAFKA_TOPIC_PARTITIONS). `--replicas N` on the
     * command line wins.
     */
    CORRIDOR_SPLIT_REPLICAS: z.coerce.number().int().min(1).max(9).default(1),
  }),
);
const { values: cli } = parseArgs({ options: { replicas: { type: "string" } }, allowPositionals: false });
const replicas = cli.replicas === undefined ? config.CORRIDOR_SPLIT_REPLICAS : z.coerce.number().int().min(1).max(9).parse(cli.replicas);

// The connectors' names and settings are checked before any process starts: one message lists every fault.
let connectorNames: string[] = [];
try {
  const defs = await connectorDefinitions(config.CORRIDOR_CONNECTORS);
  checkConnectorSettings(defs, process.env);
  connectorNames = defs.map((d) => d.name);
} catch (err) {
  if (!(err instanceof ConnectorSetupError)) throw err;
  process.stderr.write(`[split] cannot start\n${err.message}\n`);
  process.exit(78);
}

const root = resolve(import.meta.dirname, "..");
/** The service's port: where it listens alone, and where its replica 1 listens beside others (the address for tools that take one). */
const portOf = (s: ServiceName) => replicaPortOf(s, 1);
/** Where replica `r` (1-based) of a service listens. */
const replicaPortOf = (s: ServiceName, r: number) => splitReplicaPort(config.CORRIDOR_SPLIT_PORT_BASE, s, r);
/** A connector's port: fixed by its place among the shipped connectors, whichever others run. */
const connectorPortOf = (c: string) => splitConnectorPort(config.CORRIDOR_SPLIT_CONNECTOR_PORT_BASE, c);
/**
 * Every process's CORRIDOR_<SERVICE>_URL: the service's one URL, or its replicas' comma-separated,
 * which the caller's transport calls in turn, skipping one that refuses connections (dead,
 * restarting, not started yet). No process in between: Kubernetes balances in the kernel
 * (kube-proxy), and a balancer here would copy every call's bytes through this process.
 */
const urls = Object.fromEntries(SERVICE_NAMES.map((s) => [serviceUrlEnvKey(s), Array.from({ length: replicas }, (_, i) => `http://127.0.0.1:${replicaPortOf(s, i + 1)}`).join(",")]));
/** The one address of a service for a tool that takes one (the operator CLI): its port, replica 1's. */
const soleUrlOf = (s: ServiceName) => `http://127.0.0.1:${portOf(s)}`;
const children = new Map<string, ChildProcess>();
let stopping = false;

/** The command line of one deployable (a service, the gateway, or a connector: `args` after the entry) in the configured runtime. */
function argsFor(name: string, entry: string, args: string[] = []): string[] {
  const semiSpace = config.CORRIDOR_SPLIT_SEMI_SPACE_MB > 0 ? [`--max-semi-space-size=${config.CORRIDOR_SPLIT_SEMI_SPACE_MB}`] : [];
  // The extra flags come last, so one given there wins.
  const nodeArgs = [...semiSpace, ...config.CORRIDOR_SPLIT_NODE_ARGS.split(" ").filter(Boolean)];
  if (config.CORRIDOR_SPLIT_RUNTIME === "tsx") return [...nodeArgs, "--import", "tsx", join(root, entry), ...args];
  const dist = resolve(root, config.CORRIDOR_SPLIT_DIST_DIR);
  const compiled = join(dist, "app", "bin", `${name}.js`);
  if (!existsSync(compiled)) {
    process.stderr.write(`[split] ${compiled} is missing: run \`npm run build\` (or set CORRIDOR_SPLIT_RUNTIME=tsx)\n`);
    process.exit(1);
  }
  // Through the image's entry point, as the image and the chart run it (source-mapped stack traces).
  return [...nodeArgs, join(dist, "app", "corridor.mjs"), name, ...args];
}

interface Deployable {
  /** The process's name in logs and CORRIDOR_PROCESS lines (a replica's carries its number). */
  name: string;
  /** What it runs: a service's name, or "gateway". */
  program: string;
  entry: string;
  /** The deployable of the built app (`connector` for every connector) and its arguments. */
  bin?: { name: string; args: string[] };
  port: number;
  /** METRICS_PORT of the process, when the split runner gives metrics ports. */
  metricsPort: number | undefined;
  /** Restarts in a row (reset once a start stays up CORRIDOR_SPLIT_RESTART_RESET_MS). */
  restarts: number;
  startedAt: number;
  /** Environment of this process on top of the launcher's. */
  env: Record<string, string>;
}

const restartTimers = new Set<NodeJS.Timeout>();

function launch(d: Deployable): void {
  const child = spawn(process.execPath, argsFor(d.bin?.name ?? d.program, d.entry, d.bin?.args), {
    cwd: root,
    env: { ...process.env, ...urls, ...d.env, ...(d.metricsPort === undefined ? {} : { METRICS_PORT: String(d.metricsPort) }), PORT: String(d.port), HOST: "127.0.0.1", OTEL_SERVICE_NAME: process.env.OTEL_SERVICE_NAME ?? d.program },
    stdio: ["ignore", "pipe", "pipe"],
  });
  d.startedAt = Date.now();
  for (const stream of [child.stdout!, child.stderr!]) {
    createInterface({ input: stream }).on("line", (line) => process.stderr.write(`[${d.name}] ${line}\n`));
  }
  child.on("exit", (code, signal) => {
    children.delete(d.name);
    if (!stopping) onDeath(d, signal ?? code);
  });
  children.set(d.name, child);
  // Machine-readable, for tooling that watches the processes (the chaos suite kills them by pid).
  process.stdout.write(`CORRIDOR_PROCESS ${JSON.stringify({ name: d.name, pid: child.pid })}\n`);
}

/** A process died on its own: start it again after a doubling back-off, or give up and stop everything. */
function onDeath(d: Deployable, how: NodeJS.Signals | number | null): void {
  const upMs = Date.now() - d.startedAt;
  if (upMs >= config.CORRIDOR_SPLIT_RESTART_RESET_MS) d.restarts = 0;
  if (d.restarts >= config.CORRIDOR_SPLIT_RESTART_LIMIT) {
    const why = config.CORRIDOR_SPLIT_RESTART_LIMIT === 0 ? "restarts are off (CORRIDOR_SPLIT_RESTART_LIMIT=0)" : `it died ${d.restarts + 1} times in a row`;
    process.stderr.write(`[split] ${d.name} exited (${how}) after ${upMs} ms; ${why}: stopping everything\n`);
    void stopAll(1);
    return;
  }
  const delay = restartDelayMs(d.restarts, config.CORRIDOR_SPLIT_RESTART_BACKOFF_MS, config.CORRIDOR_SPLIT_RESTART_BACKOFF_MAX_MS);
  d.restarts++;
  process.stderr.write(
    `[split] ${d.name} exited (${how}) after ${upMs} ms; restarting it in ${delay} ms (restart ${d.restarts} of at most ${config.CORRIDOR_SPLIT_RESTART_LIMIT} in a row)\n`,
  );
  const timer = setTimeout(() => {
    restartTimers.delete(timer);
    if (!stopping) launch(d);
  }, delay);
  restartTimers.add(timer);
}

async function stopAll(exitCode: number): Promise<never> {
  stopping = true;
  for (const t of restartTimers) clearTimeout(t);
  const exits = [...children.values()].map((c) => new Promise((r) => c.once("exit", r)));
  for (const c of children.values()) c.kill("SIGTERM");
  await Promise.race([Promise.all(exits), new Promise((r) => setTimeout(r, 15_000))]);
  for (const c of children.values()) c.kill("SIGKILL");
  process.exit(exitCode);
}

process.on("SIGINT", () => void stopAll(0));
process.on("SIGTERM", () => void stopAll(0));

const metricsBase = config.CORRIDOR_SPLIT_METRICS_PORT_BASE;
const metricsPortOf = (s: ServiceName, r: number) => (metricsBase ? metricsBase + 10 * (r - 1) + 1 + SERVICE_NAMES.indexOf(s) : undefined);
const deployable = (name: string, program: string, port: number, metricsPort: number | undefined, extraEnv: Record<string, string> = {}): Deployable => ({
  name,
  program,
  entry: program === "gateway" ? "gateway/src/main.ts" : `services/${program}/src/main.ts`,
  port,
  metricsPort,
  restarts: 0,
  startedAt: 0,
  env: extraEnv,
});
/** Replica r of a service is `ledger` alone, `ledger#1`, `ledger#2`, ... beside others. */
const replicaName = (s: ServiceName, r: number) => (replicas === 1 ? s : `${s}#${r}`);
// No connection recycling (CONNECT_MAX_CONNECTION_AGE_MS stays as given, 0 by default): callers
// spread their calls, not their connections, over the replicas, and call a restarted replica again
// once it accepts connections. Recycling is for callers behind one balanced address (Kubernetes).

/** Resolves once something accepts TCP connections on `port` (a service listens once it has migrated and subscribed). */
async function listening(port: number, deadline: number): Promise<boolean> {
  while (Date.now() < deadline && !stopping) {
    const up = await new Promise<boolean>((resolve) => {
      const socket = connect({ port, host: "127.0.0.1" });
      socket.once("connect", () => {
        socket.destroy();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
    });
    if (up) return true;
    await new Promise((r) => setTimeout(r, 200));
  }
  return false;
}

for (const s of SERVICE_NAMES) launch(deployable(replicaName(s, 1), s, replicaPortOf(s, 1), metricsPortOf(s, 1)));
launch(deployable("gateway", "gateway", config.CORRIDOR_HTTP_PORT, metricsBase || undefined));
// The other replicas once the first of their service listens (it has migrated its schema: two
// first starts would race for the migration tables), as a rolling deployment adds them.
for (const s of SERVICE_NAMES) {
  if (replicas === 1) break;
  void listening(replicaPortOf(s, 1), Date.now() + config.CORRIDOR_READY_TIMEOUT_MS).then((up) => {
    if (!up) return;
    for (let r = 2; r <= replicas; r++) launch(deployable(replicaName(s, r), s, replicaPortOf(s, r), metricsPortOf(s, r)));
  });
}
// Each rail connector named in CORRIDOR_CONNECTORS (once, by its own name), as its own process
// named `connector-<name>` on its fixed port (CORRIDOR_SPLIT_CONNECTOR_PORT_BASE + its index: health
// and the operator's ConnectorAdminService), on the same Postgres and Kafka, its settings from this
// environment. A connector that cannot start (a bad setting) dies and is restarted like any process.
const connectorUrls = connectorNames.map((c) => ({ name: c, url: `http://127.0.0.1:${connectorPortOf(c)}` }));
for (const c of connectorNames) {
  launch({ ...deployable(`connector-${c}`, "connector", connectorPortOf(c), undefined), entry: "embedded/src/connector-main.ts", bin: { name: "connector", args: [c] } });
  process.stderr.write(`[split] connector ${c} on ${connectorUrls.find((u) => u.name === c)!.url} (npm run admin -- --connector-url <it> connector files list --connector ${c})\n`);
}

const base = `http://127.0.0.1:${config.CORRIDOR_HTTP_PORT}`;
const deadline = Date.now() + config.CORRIDOR_READY_TIMEOUT_MS;
for (;;) {
  try {
    const res = await fetch(`${base}/readyz`);
    if (res.ok) break;
  } catch {
    // not listening yet
  }
  if (Date.now() > deadline) {
    process.stderr.write("[split] services did not become ready in time\n");
    await stopAll(1);
  }
  await new Promise((r) => setTimeout(r, 500));
}
// Every replica listening too (the gateway is ready once one replica of each service serves).
for (const s of SERVICE_NAMES) {
  for (let r = 2; r <= replicas; r++) {
    if (!(await listening(replicaPortOf(s, r), deadline))) {
      process.stderr.write(`[split] ${replicaName(s, r)} did not start listening in time\n`);
      await stopAll(1);
    }
  }
}

const creds = await ensureSandboxPlatform({
  transport: createServiceTransport({ baseUrl: urls[serviceUrlEnvKey("auth-sessions")]! }),
  credentialsFile: join(resolve(config.CORRIDOR_DATA_DIR), "split-sandbox-credentials.json"),
  clientId: config.CORRIDOR_BOOTSTRAP_CLIENT_ID,
  clientSecret: config.CORRIDOR_BOOTSTRAP_CLIENT_SECRET,
});
process.stdout.write(
  banner({
    mode: "split",
    url: base,
    creds,
    extra: connectorUrls.length === 0 ? [] : ["", ...connectorUrls.map((c) => `Rail connector ${c.name}: ${c.url} (operator CLI: npm run admin -- --url ${soleUrlOf("auth-sessions")} --connector-url ${c.url} connector files list --connector ${c.name})`)],
  }),
);
// Machine-readable line for tooling that launches split mode (the end-to-end harness); like the
// banner, it carries the secret only on the start that generated it.
process.stdout.write(`CORRIDOR_READY ${JSON.stringify(readyInfo(base, creds))}\n`);
