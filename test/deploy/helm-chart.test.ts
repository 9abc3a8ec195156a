// The Helm chart (helm/corridor) checked against the code it deploys. Everything expected here is
// read from the repository — the deployables from services/, their default ports and the
// variables they read from their composition roots, the health endpoints from the gateway's routes
// — so a change on either side that the other does not follow fails here. helm comes from
// test/infra/helm.ts (HELM_BIN, PATH, or the binary bundled in a devDependency on linux-x64).
// The rendered objects are also validated against the Kubernetes API schemas (kubernetes-models):
// kubectl's own validation needs a live API server.
import { execFile, execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { PrometheusRule, type IPrometheusRule } from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule";
import { ServiceMonitor, type IServiceMonitor } from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor";
import { DEFAULT_SERVICE_PORTS, SERVICE_NAMES, serviceUrlEnvKey, type ServiceName } from "@corridor/kit";
import { Deployment, type IDeployment } from "kubernetes-models/apps/v1/Deployment";
import { HorizontalPodAutoscaler, type IHorizontalPodAutoscaler } from "kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler";
import { Job, type IJob } from "kubernetes-models/batch/v1/Job";
import { NetworkPolicy, type INetworkPolicy } from "kubernetes-models/networking.k8s.io/v1/NetworkPolicy";
import { PodDisruptionBudget, type IPodDisruptionBudget } from "kubernetes-models/policy/v1/PodDisruptionBudget";
import type { IContainer } from "kubernetes-models/v1/Container";
import { ConfigMap, type IConfigMap } from "kubernetes-models/v1/ConfigMap";
import { Secret, type ISecret } from "kubernetes-models/v1/Secret";
import { Service, type IService } from "kubernetes-models/v1/Service";
import { afterAll, describe, expect, it } from "vitest";
import { parse as parseYaml, parseAllDocuments, stringify as toYaml } from "yaml";
import { deployables as imageDeployables } from "../../scripts/build.mjs";
import { findHelm } from "../infra/helm.js";
import { loadLedgerConfig } from "../../services/ledger/src/config.js";

const run = promisify(execFile);
const root = resolve(import.meta.dirname, "../..");
const chart = join(root, "helm", "corridor");
const source = (path: string) => readFileSync(join(root, path), "utf8");

// ---------------------------------------------------------------------------------------------
// What the code says
// ---------------------------------------------------------------------------------------------

/** A service is a folder of services/ with an entry point; the gateway is the other deployable. */
const serviceNames = readdirSync(join(root, "services"), { withFileTypes: true })
  .filter((d) => d.isDirectory() && existsSync(join(root, "services", d.name, "src", "main.ts")))
  .map((d) => d.name)
  .sort();
const deployables = ["gateway", ...serviceNames];

// The gateway's composition root and its config schema (gateway/src/config.ts, where there is one).
const gatewayMain = ["gateway/src/main.ts", "gateway/src/config.ts"]
  .filter((f) => existsSync(join(root, f)))
  .map(source)
  .join("\n");
const standaloneHost = source("packages/kit/src/host/standalone.ts");

function match(text: string, pattern: RegExp, what: string): RegExpMatchArray {
  const m = text.match(pattern);
  if (!m) throw new Error(`could not find ${what} (${pattern}); update this test with the code`);
  return m;
}

/** The port each deployable listens on when PORT is not set. */
const defaultPort: Record<string, number> = {
  gateway: Number(match(gatewayMain, /\bPORT:\s*env\.port\((\d+)\)/, "the gateway's default PORT in gateway/src/main.ts or config.ts")[1]),
};
// Every service's main.ts hands itself to runStandalone, whose PORT defaults to
// DEFAULT_SERVICE_PORTS[name].
match(standaloneHost, /\bPORT:\s*env\.port\(DEFAULT_SERVICE_PORTS\[service\]\)/, "runStandalone's default PORT");
for (const name of serviceNames) {
  match(source(`services/${name}/src/main.ts`), /\brunStandalone\(/, `runStandalone in services/${name}/src/main.ts`);
  defaultPort[name] = DEFAULT_SERVICE_PORTS[name as ServiceName];
}

// Every process reads METRICS_PORT (the kit's metricsPortSetting) in its config schema.
for (const text of [gatewayMain, standaloneHost]) match(text, /^\s*METRICS_PORT: metricsPortSetting,/m, "METRICS_PORT in a config schema");

/** Connection settings a deployable reads, found as keys of its config schema. */
const INFRA_KEYS = ["DATABASE_URL", "REDIS_URL", "KAFKA_BROKERS"] as const;
const readsKeys = (...texts: string[]) => INFRA_KEYS.filter((k) => texts.some((t) => new RegExp(`^\\s*${k}:`, "m").test(t)));
const infraKeysRead: Record<string, string[]> = { gateway: readsKeys(gatewayMain) };
for (const name of serviceNames) {
  const own = existsSync(join(root, "services", name, "src", "config.ts")) ? source(`services/${name}/src/config.ts`) : "";
  infraKeysRead[name] = readsKeys(standaloneHost, own);
}

// The gateway finds every service at CORRIDOR_<SERVICE>_URL (serviceUrlEnvKey), and so does a
// service calling another (serviceUrl in the kit's host).
match(gatewayMain, /serviceUrlEnvKey\(s\)/, "the gateway's CORRIDOR_<SERVICE>_URL settings");
match(standaloneHost, /serviceUrl\(service\b/, "a service's transports to the others");

// The gateway's probe endpoints, and grpc.health.v1 on every service's own port.
const healthRoutes = source("gateway/src/routes/health.ts");
const LIVENESS_PATH = match(healthRoutes, /"(\/healthz)"/, "the gateway's liveness route")[1]!;
const READINESS_PATH = match(healthRoutes, /"(\/readyz)"/, "the gateway's readiness route")[1]!;
match(standaloneHost, /health\.routes\(router\)/, "grpc.health.v1 on the service port");

// Who calls whom over Connect: the gateway's clients and each service's transportFor("<service>").
function tsFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((d) => d.isFile() && d.name.endsWith(".ts") && !d.name.endsWith(".test.ts"))
    .map((d) => join(d.parentPath, d.name));
}
const calleesIn = (files: string[]) =>
  [...new Set(files.flatMap((f) => [...readFileSync(f, "utf8").matchAll(/transportFor!?\(\s*"([a-z-]+)"\s*\)/g)].map((m) => m[1]!)))].sort();
const callGraph: Record<string, string[]> = { gateway: calleesIn([join(root, "gateway/src/clients.ts")]) };
for (const name of serviceNames) callGraph[name] = calleesIn(tsFiles(`services/${name}/src`)).filter((c) => c !== name);
const callersOf = (service: string) => Object.keys(callGraph).filter((caller) => callGraph[caller]!.includes(service)).sort();

// The migrate-only and no-migration-at-start settings the chart's Job and Deployments use.
match(standaloneHost, /^\s*CORRIDOR_MIGRATE_ONLY: env\.bool\(false\),/m, "CORRIDOR_MIGRATE_ONLY in the standalone config");
match(standaloneHost, /^\s*CORRIDOR_MIGRATE_ON_START: env\.bool\(true\),/m, "CORRIDOR_MIGRATE_ON_START in the standalone config");

// A rail connector's process (runConnector): its default health port and the settings it reads.
const connectorHost = source("packages/connector/src/standalone.ts");
const CONNECTOR_PORT = Number(match(connectorHost, /\bPORT:\s*env\.port\((\d+)\)/, "runConnector's default PORT")[1]);
const connectorInfraKeys = INFRA_KEYS.filter((k) => new RegExp(`^\\s*${k}:`, "m").test(connectorHost));

const chartValues = parseYaml(readFileSync(join(chart, "values.yaml"), "utf8")) as {
  image: { repository: string };
  defaults: { podSecurityContext?: { runAsNonRoot?: boolean; runAsUser?: number } };
};
const chartMeta = parseYaml(readFileSync(join(chart, "Chart.yaml"), "utf8")) as { appVersion: string };

// ---------------------------------------------------------------------------------------------
// Rendering
// ---------------------------------------------------------------------------------------------

const lookup = await findHelm();
const scratch = mkdtempSync(join(tmpdir(), "corridor-helm-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
// helm keeps its own config, cache and data apart from the user's (plugins, repositories).
const helmEnv = {
  ...process.env,
  HELM_CACHE_HOME: join(scratch, "cache"),
  HELM_CONFIG_HOME: join(scratch, "config"),
  HELM_DATA_HOME: join(scratch, "data"),
};

async function helm(args: string[]): Promise<string> {
  const { stdout } = await run(lookup.bin!, args, { cwd: root, env: helmEnv, maxBuffer: 32 * 1024 * 1024 });
  return stdout;
}

/** `helm template` failing, with its message. */
async function helmFails(args: string[]): Promise<string> {
  try {
    await helm(args);
  } catch (err) {
    return String((err as { stderr?: string }).stderr ?? err);
  }
  throw new Error(`helm ${args.join(" ")} succeeded; it should have failed`);
}

let valuesFiles = 0;
function valuesArgs(overrides?: object): string[] {
  if (!overrides) return [];
  const file = join(scratch, `values-${++valuesFiles}.yaml`);
  writeFileSync(file, toYaml(overrides));
  return ["-f", file];
}

interface Rendered {
  deployments: Map<string, IDeployment>;
  services: Map<string, IService>;
  secrets: Map<string, ISecret>;
  serviceMonitors: Map<string, IServiceMonitor>;
  prometheusRules: Map<string, IPrometheusRule>;
  configMaps: Map<string, IConfigMap>;
  pdbs: Map<string, IPodDisruptionBudget>;
  hpas: Map<string, IHorizontalPodAutoscaler>;
  networkPolicies: Map<string, INetworkPolicy>;
  jobs: Map<string, IJob>;
  all: { kind: string; metadata: { name: string; annotations?: Record<string, string> } }[];
}

const RELEASE = "corr";
const models = { Deployment, Service, Secret, ConfigMap, ServiceMonitor, PrometheusRule, PodDisruptionBudget, HorizontalPodAutoscaler, NetworkPolicy, Job } as const;

async function render(overrides?: object, extraArgs: string[] = []): Promise<Rendered> {
  const out = await helm(["template", RELEASE, chart, "--namespace", "payments", ...valuesArgs(overrides), ...extraArgs]);
  const rendered: Rendered = {
    deployments: new Map(),
    services: new Map(),
    secrets: new Map(),
    serviceMonitors: new Map(),
    prometheusRules: new Map(),
    configMaps: new Map(),
    pdbs: new Map(),
    hpas: new Map(),
    networkPolicies: new Map(),
    jobs: new Map(),
    all: [],
  };
  for (const doc of parseAllDocuments(out)) {
    if (doc.errors.length > 0) throw new Error(`helm rendered invalid YAML: ${doc.errors[0]!.message}`);
    const obj = doc.toJS() as { apiVersion: string; kind: string; metadata: { name: string } } | null;
    if (obj === null) continue;
    const Model = models[obj.kind as keyof typeof models];
    if (!Model) throw new Error(`the chart renders a ${obj.kind}, which this test does not know; add its checks`);
    // Throws with the offending path when the object does not match the API schema.
    new Model(obj as never).validate();
    const byName = {
      Deployment: rendered.deployments,
      Service: rendered.services,
      Secret: rendered.secrets,
      ServiceMonitor: rendered.serviceMonitors,
      PrometheusRule: rendered.prometheusRules,
      ConfigMap: rendered.configMaps,
      PodDisruptionBudget: rendered.pdbs,
      HorizontalPodAutoscaler: rendered.hpas,
      NetworkPolicy: rendered.networkPolicies,
      Job: rendered.jobs,
    }[obj.kind as keyof typeof models] as Map<string, unknown>;
    expect(byName.has(obj.metadata.name), `two ${obj.kind}s named ${obj.metadata.name}`).toBe(false);
    byName.set(obj.metadata.name, obj as never);
    rendered.all.push(obj);
  }
  return rendered;
}

function containerOf(r: Rendered, name: string): IContainer {
  const d = r.deployments.get(name);
  expect(d, `Deployment ${name}`).toBeDefined();
  const containers = d!.spec!.template.spec!.containers;
  expect(containers).toHaveLength(1);
  return containers[0]!;
}

function plainEnv(c: IContainer): Record<string, string> {
  return Object.fromEntries((c.env ?? []).filter((e) => e.valueFrom === undefined).map((e) => [e.name, e.value ?? ""]));
}

function secretEnv(c: IContainer): Record<string, { secret: string; key: string }> {
  return Object.fromEntries(
    (c.env ?? [])
      .filter((e) => e.valueFrom?.secretKeyRef)
      .map((e) => [e.name, { secret: e.valueFrom!.secretKeyRef!.name!, key: e.valueFrom!.secretKeyRef!.key }]),
  );
}

/** The container port a probe or Service names, by number or by port name. */
function resolvePort(c: IContainer, port: number | string): number | undefined {
  if (typeof port === "number") return c.ports?.some((p) => p.containerPort === port) ? port : undefined;
  return c.ports?.find((p) => p.name === port)?.containerPort;
}

/** Whether a label selector (matchLabels) selects the pods of a Deployment. */
function selects(selector: Record<string, string> | undefined, d: IDeployment): boolean {
  const labels = d.spec!.template.metadata!.labels!;
  return selector !== undefined && Object.keys(selector).length > 0 && Object.entries(selector).every(([k, v]) => labels[k] === v);
}

/** The deployable names (app.kubernetes.io/name) a NetworkPolicy peer list selects by pod selector. */
function podNames(peers: { podSelector?: { matchLabels?: Record<string, string> }; namespaceSelector?: unknown; ipBlock?: unknown }[] | undefined): string[] {
  return (peers ?? []).filter((p) => p.podSelector && !p.namespaceSelector).map((p) => p.podSelector!.matchLabels!["app.kubernetes.io/name"]!).sort();
}

const hooks = (o: { metadata?: { annotations?: Record<string, string> } }) => o.metadata?.annotations?.["helm.sh/hook"];

// Where the infrastructure is, for renders with NetworkPolicies on.
const NETPOL = {
  networkPolicy: {
    enabled: true,
    egress: {
      postgres: { cidrs: ["10.10.0.0/24"] },
      redis: { peers: [{ podSelector: { matchLabels: { app: "redis" } } }] },
      kafka: { cidrs: ["10.20.0.0/24"], ports: [9092, 9093] },
      otel: { peers: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "observability" } } }] },
    },
  },
};
const ACH = {
  name: "ach-nacha",
  env: { ACH_SFTP_HOST: "sftp.bank.example", ACH_SFTP_USERNAME: "corridor" },
  secretFiles: { ACH_SFTP_PRIVATE_KEY: { secret: "corridor-ach-sftp", key: "id_ed25519" }, ACH_SFTP_HOST_KEY: { secret: "corridor-ach-sftp", key: "host_key" } },
  sftp: { cidrs: ["203.0.113.10/32"] },
};

// ---------------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------------

describe("the repository's deployables", () => {
  it("are the services the kit knows, each with a default port of its own", () => {
    expect(serviceNames).toEqual([...SERVICE_NAMES].sort());
    const ports = Object.values(defaultPort);
    expect(new Set(ports).size).toBe(ports.length);
    for (const name of deployables) expect(infraKeysRead[name]!.length, `${name} reads no connection settings?`).toBeGreaterThan(0);
  });

  it("are all built into the image and known to the Tiltfile", () => {
    const dockerfile = source("deploy/Dockerfile");
    const tiltfile = source("Tiltfile");
    const exposed = match(dockerfile, /^EXPOSE\s+(.+)$/m, "EXPOSE in deploy/Dockerfile")[1]!.trim().split(/\s+/).map(Number);
    const tiltServices = JSON.parse(match(tiltfile, /^SERVICES\s*=\s*(\[[^\]]*\])/m, "SERVICES in the Tiltfile")[1]!.replace(/'/g, '"')) as string[];
    expect(tiltServices.sort()).toEqual(serviceNames);
    // scripts/build.mjs compiles one entry per deployable, named as the chart's container argument
    // (deploy/corridor.mjs, the image's ENTRYPOINT, runs the one its first argument names).
    const built = new Map(imageDeployables().map((d) => [d.name, d.entry]));
    for (const name of deployables) {
      expect(built.get(name), `scripts/build.mjs builds ${name}`).toBe(name === "gateway" ? "gateway/src/main.ts" : `services/${name}/src/main.ts`);
      expect(exposed, `deploy/Dockerfile EXPOSEs ${name}'s port`).toContain(defaultPort[name]);
    }
    expect(match(dockerfile, /^ENTRYPOINT\s+(.+)$/m, "ENTRYPOINT in deploy/Dockerfile")[1]).toBe('["node", "/app/corridor.mjs"]');
    // The image Tilt builds is the one the chart deploys, and its user is the chart's.
    expect(match(tiltfile, /(?:docker|custom)_build\(\s*'([^']+)'/, "the image build in the Tiltfile")[1]).toBe(chartValues.image.repository);
    const user = match(dockerfile, /^USER\s+(\d+)(?::\d+)?\s*$/m, "a numeric USER in deploy/Dockerfile")[1]!;
    expect(Number(user)).not.toBe(0);
    expect(chartValues.defaults.podSecurityContext?.runAsUser).toBe(Number(user));
  });
});

const describeHelm = "unavailable" in lookup ? describe.skip : describe;
describeHelm("unavailable" in lookup ? `helm chart — skipped: ${lookup.unavailable}` : `helm chart (helm from ${lookup.source})`, () => {
  it("lints clean with --strict, with the default values and with Tilt's", async () => {
    await helm(["lint", "--strict", chart]);
    await helm(["lint", "--strict", chart, "-f", join(root, "deploy", "dev", "values-dev.yaml")]);
  });

  it("renders one Deployment and one Service per deployable, valid against the Kubernetes API", async () => {
    const r = await render();
    expect([...r.deployments.keys()].sort()).toEqual([...deployables].sort());
    expect([...r.services.keys()].sort()).toEqual([...deployables].sort());
    for (const name of deployables) {
      const d = r.deployments.get(name)!;
      const podLabels = d.spec!.template.metadata!.labels!;
      // The Deployment owns its pods, and its Service reaches exactly them.
      for (const [k, v] of Object.entries(d.spec!.selector.matchLabels!)) expect(podLabels[k]).toBe(v);
      for (const [k, v] of Object.entries(r.services.get(name)!.spec!.selector!)) expect(podLabels[k], `Service ${name} selects ${k}`).toBe(v);
      // The image's ENTRYPOINT runs; the argument names the deployable.
      expect(containerOf(r, name).command).toBeUndefined();
      expect(containerOf(r, name).args).toEqual([name]);
      expect(plainEnv(containerOf(r, name)).OTEL_SERVICE_NAME).toBe(name);
    }
  });

  it("listens on each deployable's default port, and its Service forwards there", async () => {
    const r = await render();
    for (const name of deployables) {
      const c = containerOf(r, name);
      const port = defaultPort[name]!;
      expect(c.ports?.filter((p) => p.name !== "metrics").map((p) => p.containerPort), name).toEqual([port]);
      expect(plainEnv(c).PORT, name).toBe(String(port));
      const svcPorts = r.services.get(name)!.spec!.ports!;
      expect(svcPorts).toHaveLength(1);
      expect(svcPorts[0]!.port, `Service ${name}`).toBe(port);
      expect(resolvePort(c, svcPorts[0]!.targetPort ?? svcPorts[0]!.port), `Service ${name} targetPort`).toBe(port);
    }
  });

  it("points the gateway and every service at each service's in-cluster address", async () => {
    const r = await render();
    for (const name of deployables) {
      const env = plainEnv(containerOf(r, name));
      for (const s of SERVICE_NAMES) {
        // The Service named after s, on s's port, in the release's namespace.
        const url = new URL(env[serviceUrlEnvKey(s)] ?? "http://missing");
        expect(url.protocol, `${name} → ${s}`).toBe("http:");
        expect([s, `${s}.payments`, `${s}.payments.svc`, `${s}.payments.svc.cluster.local`], `${name} → ${s}`).toContain(url.hostname);
        expect(Number(url.port), `${name} → ${s}`).toBe(r.services.get(s)!.spec!.ports![0]!.port);
      }
    }
  });

  it("turns loopback webhook endpoints off for the gateway, auth-sessions and notifications (issue 23: no platform reaches a pod's own ports)", async () => {
    const r = await render();
    for (const name of ["gateway", "auth-sessions", "notifications"]) {
      const env = plainEnv(containerOf(r, name));
      expect(env.CORRIDOR_WEBHOOK_ALLOW_LOOPBACK, name).toBe("false");
      expect(env.CORRIDOR_WEBHOOK_ALLOWED_RANGES ?? "", name).toBe("");
    }
  });

  it("probes the endpoints the code serves", async () => {
    const r = await render();
    const gw = containerOf(r, "gateway");
    expect(gw.readinessProbe?.httpGet?.path).toBe(READINESS_PATH);
    expect(gw.livenessProbe?.httpGet?.path).toBe(LIVENESS_PATH);
    for (const probe of [gw.readinessProbe, gw.livenessProbe, gw.startupProbe]) {
      expect(probe?.httpGet, "gateway probes are HTTP").toBeDefined();
      expect(resolvePort(gw, probe!.httpGet!.port)).toBe(defaultPort.gateway);
    }
    for (const name of serviceNames) {
      const c = containerOf(r, name);
      for (const probe of [c.readinessProbe, c.livenessProbe, c.startupProbe]) {
        expect(probe?.grpc, `${name} probes grpc.health.v1`).toBeDefined();
        expect(probe!.grpc!.port, name).toBe(defaultPort[name]);
      }
      // Readiness (and start-up) ask for the server as a whole, the empty service name, which
      // includes its database; liveness asks for "liveness", the process alone, so a database
      // outage makes pods unready but restarts none (kit host/health.ts).
      expect(c.readinessProbe!.grpc!.service ?? "", name).toBe("");
      expect(c.startupProbe!.grpc!.service ?? "", name).toBe("");
      expect(c.livenessProbe!.grpc!.service, name).toBe("liveness");
    }
  });

  it("hands every deployable the connection settings it reads, from the infra Secret", async () => {
    const r = await render();
    // The infra Secret, and the migrations Job's hook copy of DATABASE_URL (migrations-job.yaml).
    expect([...r.secrets.keys()].sort()).toEqual([`${RELEASE}-infra`, `${RELEASE}-migrations`]);
    const secret = r.secrets.get(`${RELEASE}-infra`)!;
    expect(Object.keys(secret.stringData ?? {}).sort()).toEqual([...INFRA_KEYS].sort());
    for (const name of deployables) {
      const refs = secretEnv(containerOf(r, name));
      for (const key of infraKeysRead[name]!) {
        expect(refs[key], `${name} gets ${key}`).toEqual({ secret: `${RELEASE}-infra`, key });
      }
      for (const ref of Object.values(refs)) expect(INFRA_KEYS as readonly string[]).toContain(ref.key);
      expect(plainEnv(containerOf(r, name)), `${name} has no plain copy of a setting`).not.toHaveProperty("DATABASE_URL");
    }
  });

  it("runs nothing as root, hardened, with resources set", async () => {
    const r = await render();
    for (const name of deployables) {
      const pod = r.deployments.get(name)!.spec!.template.spec!;
      const c = containerOf(r, name);
      const runAsNonRoot = c.securityContext?.runAsNonRoot ?? pod.securityContext?.runAsNonRoot;
      const runAsUser = c.securityContext?.runAsUser ?? pod.securityContext?.runAsUser;
      if (chartValues.defaults.podSecurityContext?.runAsNonRoot) expect(runAsNonRoot, name).toBe(true);
      // A runAsNonRoot pod with no numeric user would be refused for an image whose USER is a name.
      expect(runAsUser, name).toBeGreaterThan(0);
      expect(c.securityContext?.allowPrivilegeEscalation, name).toBe(false);
      expect(c.securityContext?.privileged ?? false, name).toBe(false);
      expect(c.securityContext?.capabilities?.drop, name).toContain("ALL");
      expect(pod.automountServiceAccountToken, name).toBe(false);
      if (c.securityContext?.readOnlyRootFilesystem) {
        // Node and the libraries it loads may write temporary files: /tmp must then be a volume.
        expect(c.volumeMounts?.map((m) => m.mountPath), name).toContain("/tmp");
      }
      expect(c.resources?.requests?.cpu, name).toBeDefined();
      expect(c.resources?.requests?.memory, name).toBeDefined();
      expect(c.resources?.limits?.memory, name).toBeDefined();
      // No variable twice: the later one would silently win, and server-side apply refuses it.
      const names = (c.env ?? []).map((e) => e.name);
      expect(new Set(names).size, `${name} env names`).toBe(names.length);
    }
  });

  it("deploys the image of the chart's appVersion unless told otherwise", async () => {
    const r = await render();
    for (const name of deployables) {
      expect(containerOf(r, name).image).toBe(`${chartValues.image.repository}:${chartMeta.appVersion}`);
    }
  });

  it("follows overrides: replicas, image, OTEL endpoint, extra env, a port", async () => {
    const r = await render({
      image: { repository: "registry.example/corridor", tag: "1.2.3" },
      otel: { endpoint: "http://collector.observability:4318" },
      defaults: { replicas: 3, env: { LOG_LEVEL: "debug", HOST: "::" } },
      services: {
        ledger: { replicas: 1, port: 9102, image: { tag: "1.2.4" }, env: { LOG_LEVEL: "trace" } },
        gateway: { replicas: 0 },
      },
    });
    for (const name of deployables) {
      const d = r.deployments.get(name)!;
      const c = containerOf(r, name);
      const env = plainEnv(c);
      expect(d.spec!.replicas, name).toBe(name === "ledger" ? 1 : name === "gateway" ? 0 : 3);
      expect(c.image, name).toBe(`registry.example/corridor:${name === "ledger" ? "1.2.4" : "1.2.3"}`);
      expect(env.OTEL_EXPORTER_OTLP_ENDPOINT, name).toBe("http://collector.observability:4318");
      expect(env.LOG_LEVEL, name).toBe(name === "ledger" ? "trace" : "debug");
      expect(env.HOST, name).toBe("::");
      expect(new URL(env[serviceUrlEnvKey("ledger")]!).port, `${name} → ledger`).toBe("9102");
      const names = (c.env ?? []).map((e) => e.name);
      expect(new Set(names).size, `${name} env names`).toBe(names.length);
    }
    const ledger = containerOf(r, "ledger");
    expect(ledger.ports?.filter((p) => p.name !== "metrics").map((p) => p.containerPort)).toEqual([9102]);
    expect(plainEnv(ledger).PORT).toBe("9102");
    expect(ledger.readinessProbe?.grpc?.port).toBe(9102);
    expect(r.services.get("ledger")!.spec!.ports![0]!.port).toBe(9102);

    const quiet = await render({ otel: { endpoint: "" } });
    for (const name of deployables) expect(plainEnv(containerOf(quiet, name)), name).not.toHaveProperty("OTEL_EXPORTER_OTLP_ENDPOINT");
  });

  it("hands the operator's railBindings to the ledger alone, as LEDGER_RAIL_BINDINGS, and refuses a binding to the simulator", async () => {
    const railBindings = [{ platformId: "Platform:0190f0f0-0000-7000-8000-000000000001", currency: "USD", paymentRail: "ACH", connector: "ach-nacha" }];
    const r = await render({ railBindings });
    for (const name of deployables) {
      const env = plainEnv(containerOf(r, name));
      if (name === "ledger") expect(JSON.parse(env.LEDGER_RAIL_BINDINGS!)).toEqual(railBindings);
      else expect(env, name).not.toHaveProperty("LEDGER_RAIL_BINDINGS");
    }
    expect(plainEnv(containerOf(await render({}), "ledger"))).not.toHaveProperty("LEDGER_RAIL_BINDINGS");
    await expect(render({ railBindings: [{ ...railBindings[0], connector: "sandbox" }] })).rejects.toThrow();
  });

  it("hands the operator's fundingBankAccounts to the ledger alone, as LEDGER_FUNDING_BANK_ACCOUNTS the ledger's settings take, and refuses an account it would refuse", async () => {
    const fundingBankAccounts = [
      { currency: "USD", bankName: "First Bank", accountNumber: "9988776655", routingNumber: "121042882" },
      { currency: "EUR", bankName: "Euro Bank", iban: "DE89370400440532013000", bic: "COBADEFFXXX" },
    ];
    const r = await render({ fundingBankAccounts });
    for (const name of deployables) {
      const env = plainEnv(containerOf(r, name));
      if (name === "ledger") {
        expect(JSON.parse(env.LEDGER_FUNDING_BANK_ACCOUNTS!)).toEqual(fundingBankAccounts);
        expect(loadLedgerConfig({ LEDGER_FUNDING_BANK_ACCOUNTS: env.LEDGER_FUNDING_BANK_ACCOUNTS }).LEDGER_FUNDING_BANK_ACCOUNTS).toEqual(fundingBankAccounts);
      } else expect(env, name).not.toHaveProperty("LEDGER_FUNDING_BANK_ACCOUNTS");
    }
    expect(plainEnv(containerOf(await render({}), "ledger"))).not.toHaveProperty("LEDGER_FUNDING_BANK_ACCOUNTS");
    await expect(render({ fundingBankAccounts: [{ currency: "USD", bankName: "First Bank", accountNumber: "9988776655" }] })).rejects.toThrow(); // no routing number, no IBAN
    await expect(render({ fundingBankAccounts: [{ ...fundingBankAccounts[0], routingNumber: "12104288" }] })).rejects.toThrow();
    await expect(render({ fundingBankAccounts: [{ ...fundingBankAccounts[1], password: "x" }] })).rejects.toThrow();
  });

  it("uses an existing Secret instead of creating one", async () => {
    const r = await render({ infra: { existingSecret: "corridor-connections", databaseUrl: "", redisUrl: "", kafkaBrokers: "" } });
    expect(r.secrets.size).toBe(0);
    for (const name of deployables) {
      const refs = Object.values(secretEnv(containerOf(r, name)));
      expect(refs.length, name).toBe(infraKeysRead[name]!.length);
      for (const ref of refs) expect(ref.secret, name).toBe("corridor-connections");
    }
  });

  it("passes further settings from Secrets the operator names", async () => {
    const r = await render({
      defaults: { envFrom: [{ secretRef: { name: "corridor-common" } }] },
      services: { "auth-sessions": { envFrom: [{ secretRef: { name: "corridor-wallet-key" } }] } },
    });
    for (const name of deployables) {
      const from = (containerOf(r, name).envFrom ?? []).map((f) => f.secretRef?.name);
      expect(from, name).toEqual(name === "auth-sessions" ? ["corridor-common", "corridor-wallet-key"] : ["corridor-common"]);
    }
  });

  it("refuses values it cannot deploy", async () => {
    expect(await helmFails(["template", RELEASE, chart, ...valuesArgs({ infra: { databaseUrl: "" } })])).toMatch(/infra\.databaseUrl is required/);
    // A misspelt key would otherwise be ignored without a word.
    expect(await helmFails(["template", RELEASE, chart, ...valuesArgs({ services: { ledger: { replica: 1 } } })])).toMatch(/Additional property replica/);
    expect(await helmFails(["template", RELEASE, chart, ...valuesArgs({ defaults: { env: { PORT: "1" } } })])).toMatch(/PORT is set in env for [a-z-]+: set services\.[a-z-]+\.port instead/);
    expect(await helmFails(["template", RELEASE, chart, ...valuesArgs({ services: { ledger: { env: { DATABASE_URL: "postgres://x" } } } })])).toMatch(
      /DATABASE_URL is set in env for ledger, but it comes from the infra Secret/,
    );
    // Every service is called by the gateway: one switched off here must be said to run elsewhere.
    expect(await helmFails(["template", RELEASE, chart, ...valuesArgs({ services: { ledger: { enabled: false } } })])).toMatch(/set services\.ledger\.url/);
    const elsewhere = await render({ services: { ledger: { enabled: false, url: "http://ledger.other-namespace:8102" } } });
    expect(elsewhere.deployments.has("ledger")).toBe(false);
    expect(plainEnv(containerOf(elsewhere, "gateway"))[serviceUrlEnvKey("ledger")]).toBe("http://ledger.other-namespace:8102");
  });

  it("serves /metrics on a port of its own on every pod (METRICS_PORT, a container port named metrics, scrape annotations); port 0 turns it off", async () => {
    const r = await render();
    for (const name of deployables) {
      const c = containerOf(r, name);
      expect(plainEnv(c).METRICS_PORT, name).toBe("9464");
      const metrics = c.ports!.find((p) => p.name === "metrics");
      expect(metrics?.containerPort, name).toBe(9464);
      expect(metrics!.containerPort).not.toBe(defaultPort[name]);
      expect(r.deployments.get(name)!.spec!.template.metadata!.annotations).toMatchObject({ "prometheus.io/scrape": "true", "prometheus.io/port": "9464", "prometheus.io/path": "/metrics" });
      // The public Services never expose /metrics.
      expect(r.services.get(name)!.spec!.ports!.map((p) => p.name)).not.toContain("metrics");
    }
    expect(r.serviceMonitors.size + r.prometheusRules.size + r.configMaps.size, "monitoring objects are off by default").toBe(0);
    const off = await render({ metrics: { port: 0 } });
    for (const name of deployables) {
      expect(plainEnv(containerOf(off, name)), name).not.toHaveProperty("METRICS_PORT");
      expect(containerOf(off, name).ports!.map((p) => p.name), name).not.toContain("metrics");
      expect(off.deployments.get(name)!.spec!.template.metadata!.annotations ?? {}, name).not.toHaveProperty("prometheus.io/scrape");
    }
  });

  it("renders a ServiceMonitor (and its headless Service) and a PrometheusRule when enabled, valid against the operator's schemas", async () => {
    const r = await render({ metrics: { serviceMonitor: { enabled: true, interval: "15s", labels: { release: "kps" } }, prometheusRule: { enabled: true, labels: { release: "kps" } } } });
    const monitor = r.serviceMonitors.get(RELEASE)!;
    expect(monitor.metadata!.labels).toMatchObject({ release: "kps" });
    const metricsService = r.services.get(`${RELEASE}-metrics`)!;
    expect(metricsService.spec!.clusterIP).toBe("None");
    // The ServiceMonitor selects the headless Service, which selects every deployable's pods on their metrics port.
    for (const [k, v] of Object.entries(monitor.spec.selector.matchLabels!)) expect(metricsService.metadata!.labels![k], k).toBe(v);
    for (const name of deployables) {
      const podLabels = r.deployments.get(name)!.spec!.template.metadata!.labels!;
      for (const [k, v] of Object.entries(metricsService.spec!.selector!)) expect(podLabels[k], `${name} ${k}`).toBe(v);
      expect(resolvePort(containerOf(r, name), metricsService.spec!.ports![0]!.targetPort!)).toBe(9464);
    }
    const endpoint = monitor.spec.endpoints![0]!;
    expect(endpoint).toMatchObject({ port: "metrics", path: "/metrics", interval: "15s" });
    // Each target's job is its deployable's name, as the rules and the dashboard expect.
    expect(endpoint.relabelings).toContainEqual({ sourceLabels: ["__meta_kubernetes_pod_label_app_kubernetes_io_name"], targetLabel: "job" });

    // The PrometheusRule carries deploy/prometheus/rules.yml, group for group; promtool accepts what it renders.
    const rule = r.prometheusRules.get(RELEASE)!;
    expect(rule.metadata!.labels).toMatchObject({ release: "kps" });
    expect(rule.spec).toEqual(parseYaml(source("deploy/prometheus/rules.yml")));
    if (spawnSync("promtool", ["--version"]).status === 0) {
      const file = join(scratch, "rendered-rules.yml");
      writeFileSync(file, toYaml(rule.spec));
      expect(execFileSync("promtool", ["check", "rules", file], { encoding: "utf8" })).toContain("SUCCESS");
    }
    // A ServiceMonitor without a metrics port would scrape nothing.
    expect(await helmFails(["template", RELEASE, chart, ...valuesArgs({ metrics: { port: 0, serviceMonitor: { enabled: true } } })])).toMatch(/metrics\.serviceMonitor\.enabled needs metrics\.port/);
  });

  it("ships the chart's copy of the alert rules equal to deploy/prometheus/rules.yml", () => {
    expect(source("helm/corridor/files/prometheus-rules.yml")).toBe(source("deploy/prometheus/rules.yml"));
  });

  it("ships the Grafana dashboard as a ConfigMap for Grafana's sidecar when enabled, labelled as configured, and nothing when off", async () => {
    const dashboard = source("deploy/prometheus/dashboard.json");
    const off = await render({ metrics: { grafanaDashboard: { enabled: false } } });
    expect(off.configMaps.size, "no ConfigMap when off").toBe(0);

    const on = await render({ metrics: { grafanaDashboard: { enabled: true } } });
    const name = `${RELEASE}-grafana-dashboard`;
    expect([...on.configMaps.keys()]).toEqual([name]);
    const cm = on.configMaps.get(name)!;
    expect(cm.metadata!.labels).toMatchObject({ grafana_dashboard: "1", "app.kubernetes.io/instance": RELEASE });
    expect(cm.metadata!.namespace, "the release's namespace unless told").toBeUndefined();
    // The dashboard itself, byte for byte, and valid JSON Grafana can load (a title, a uid, panels).
    expect(Object.keys(cm.data!)).toEqual(["corridor.json"]);
    expect(cm.data!["corridor.json"]!.trimEnd()).toBe(dashboard.trimEnd());
    const parsed = JSON.parse(cm.data!["corridor.json"]!) as { uid: string; title: string; panels: unknown[] };
    expect(parsed.uid).toBe("corridor-overview");
    expect(parsed.panels.length).toBeGreaterThan(0);

    // The sidecar's label, a folder annotation and a namespace are the operator's to choose (Helm
    // merges maps: null drops the default label).
    const custom = await render({ metrics: { grafanaDashboard: { enabled: true, labels: { grafana_dashboard: null, dashboards: "corridor" }, annotations: { grafana_folder: "Payments" }, namespace: "monitoring" } } });
    const c = custom.configMaps.get(name)!;
    expect(c.metadata!.labels).toMatchObject({ dashboards: "corridor" });
    expect(c.metadata!.labels).not.toHaveProperty("grafana_dashboard");
    expect(c.metadata!.annotations).toEqual({ grafana_folder: "Payments" });
    expect(c.metadata!.namespace).toBe("monitoring");
    // The schema refuses what the template cannot render.
    expect(await helmFails(["template", RELEASE, chart, ...valuesArgs({ metrics: { grafanaDashboard: { enabled: "sometimes" } } })])).toMatch(/enabled/);
    expect(await helmFails(["template", RELEASE, chart, ...valuesArgs({ metrics: { grafanaDashboard: { enabled: true, namespace: "Not A Namespace" } } })])).toMatch(/namespace/);
  });

  it("ships the chart's copy of the dashboard equal to deploy/prometheus/dashboard.json", () => {
    expect(source("helm/corridor/files/grafana-dashboard.json")).toBe(source("deploy/prometheus/dashboard.json"));
  });

  it("runs every service's migrations once per release in a pre-install/pre-upgrade Job, and tells the services not to migrate at start", async () => {
    const r = await render();
    const job = r.jobs.get(`${RELEASE}-migrations`)!;
    expect(job, "the migrations Job").toBeDefined();
    expect(hooks(job)).toBe("pre-install,pre-upgrade");
    const pod = job.spec!.template.spec!;
    expect(pod.restartPolicy).toBe("Never");
    expect(job.spec!.backoffLimit).toBeGreaterThanOrEqual(0);
    // One container per service with a database (the gateway has none), the image's entry point
    // for that service in migrate-only mode, DATABASE_URL from the Job's hook Secret.
    const withDatabase = serviceNames.filter((n) => infraKeysRead[n]!.includes("DATABASE_URL"));
    expect(pod.containers.map((c) => c.name).sort()).toEqual(withDatabase);
    const hookSecret = r.secrets.get(`${RELEASE}-migrations`)!;
    expect(hooks(hookSecret)).toBe("pre-install,pre-upgrade");
    // Created before the Job (a lower weight), as the release's own infra Secret does not exist yet at pre-install.
    expect(Number(hookSecret.metadata!.annotations!["helm.sh/hook-weight"])).toBeLessThan(Number(job.metadata!.annotations!["helm.sh/hook-weight"]));
    expect(hookSecret.stringData).toEqual({ DATABASE_URL: r.secrets.get(`${RELEASE}-infra`)!.stringData!.DATABASE_URL });
    for (const c of pod.containers) {
      expect(c.args, c.name).toEqual([c.name]);
      expect(c.command).toBeUndefined();
      expect(c.image).toBe(containerOf(r, c.name).image);
      expect(plainEnv(c).CORRIDOR_MIGRATE_ONLY, c.name).toBe("true");
      expect(secretEnv(c), c.name).toEqual({ DATABASE_URL: { secret: `${RELEASE}-migrations`, key: "DATABASE_URL" } });
      expect(c.securityContext?.readOnlyRootFilesystem, c.name).toBe(true);
      expect(c.volumeMounts?.map((m) => m.mountPath), c.name).toContain("/tmp");
      expect(c.resources?.limits?.memory, c.name).toBeDefined();
    }
    expect(pod.securityContext?.runAsNonRoot).toBe(true);
    expect(pod.automountServiceAccountToken).toBe(false);
    for (const name of serviceNames) expect(plainEnv(containerOf(r, name)).CORRIDOR_MIGRATE_ON_START, name).toBe("false");
    expect(plainEnv(containerOf(r, "gateway"))).not.toHaveProperty("CORRIDOR_MIGRATE_ON_START");
    // A service switched off (running elsewhere) is not migrated here.
    const elsewhere = await render({ services: { sandbox: { enabled: false, url: "http://sandbox.other:8107" } } });
    expect(elsewhere.jobs.get(`${RELEASE}-migrations`)!.spec!.template.spec!.containers.map((c) => c.name)).not.toContain("sandbox");

    // With an existing Secret the Job reads it (it exists before any hook runs); no hook copy.
    const existing = await render({ infra: { existingSecret: "corridor-connections", databaseUrl: "", redisUrl: "", kafkaBrokers: "" } });
    expect(existing.secrets.size).toBe(0);
    for (const c of existing.jobs.get(`${RELEASE}-migrations`)!.spec!.template.spec!.containers) {
      expect(secretEnv(c).DATABASE_URL, c.name).toEqual({ secret: "corridor-connections", key: "DATABASE_URL" });
    }

    // Off: no Job, no hook Secret, the services migrate at start.
    const off = await render({ migrations: { job: false } });
    expect(off.jobs.size).toBe(0);
    expect([...off.secrets.keys()]).toEqual([`${RELEASE}-infra`]);
    for (const name of deployables) expect(plainEnv(containerOf(off, name)), name).not.toHaveProperty("CORRIDOR_MIGRATE_ON_START");
  });

  it("gives every Deployment of more than one replica a PodDisruptionBudget, and none to single replicas", async () => {
    const r = await render({ services: { sandbox: { replicas: 1 } } });
    expect([...r.pdbs.keys()].sort()).toEqual(deployables.filter((n) => n !== "sandbox").sort());
    for (const [name, pdb] of r.pdbs) {
      expect(pdb.spec!.maxUnavailable, name).toBe(1);
      expect(pdb.spec!.minAvailable, name).toBeUndefined();
      expect(selects(pdb.spec!.selector!.matchLabels, r.deployments.get(name)!), `${name}'s budget selects its pods`).toBe(true);
      for (const [other, d] of r.deployments) if (other !== name) expect(selects(pdb.spec!.selector!.matchLabels, d), `${name}'s budget selects ${other}`).toBe(false);
    }
    const min = await render({ podDisruptionBudget: { enabled: true, minAvailable: 1, maxUnavailable: null } });
    for (const [name, pdb] of min.pdbs) {
      expect(pdb.spec!.minAvailable, name).toBe(1);
      expect(pdb.spec!.maxUnavailable, name).toBeUndefined();
    }
    expect((await render({ podDisruptionBudget: { enabled: false } })).pdbs.size).toBe(0);
    expect((await render(undefined, ["-f", join(root, "deploy", "dev", "values-dev.yaml")])).pdbs.size, "one replica each in dev: no budgets").toBe(0);
    expect(await helmFails(["template", RELEASE, chart, ...valuesArgs({ podDisruptionBudget: { minAvailable: 1 } })])).toMatch(/minAvailable|not/);
  });

  it("autoscales on CPU when asked (autoscaling/v2), leaving replicas to the autoscaler", async () => {
    const off = await render();
    expect(off.hpas.size).toBe(0);
    for (const name of deployables) expect(off.deployments.get(name)!.spec!.replicas, name).toBe(2);

    const r = await render({ autoscaling: { enabled: true, minReplicas: 3, maxReplicas: 9, targetCPUUtilizationPercentage: 65 }, services: { sandbox: { autoscaling: { enabled: false }, replicas: 1 }, ledger: { autoscaling: { maxReplicas: 4 } } } });
    expect([...r.hpas.keys()].sort()).toEqual(deployables.filter((n) => n !== "sandbox").sort());
    for (const [name, hpa] of r.hpas) {
      expect(hpa.spec!.scaleTargetRef, name).toEqual({ apiVersion: "apps/v1", kind: "Deployment", name });
      expect(r.deployments.get(name)!.spec!.replicas, `${name} leaves replicas to the autoscaler`).toBeUndefined();
      expect(hpa.spec!.minReplicas, name).toBe(3);
      expect(hpa.spec!.maxReplicas, name).toBe(name === "ledger" ? 4 : 9);
      expect(hpa.spec!.metrics, name).toEqual([{ type: "Resource", resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 65 } } }]);
      // Utilization is measured against the request: there must be one.
      expect(containerOf(r, name).resources?.requests?.cpu, name).toBeDefined();
      expect(r.pdbs.has(name), `${name} autoscaled from 3: a budget`).toBe(true);
    }
    expect(r.deployments.get("sandbox")!.spec!.replicas).toBe(1);
    expect(r.pdbs.has("sandbox")).toBe(false);
    expect(await helmFails(["template", RELEASE, chart, ...valuesArgs({ autoscaling: { enabled: true, minReplicas: 5, maxReplicas: 2 } })])).toMatch(/minReplicas \(5\) is above maxReplicas \(2\)/);
  });

  it("spreads every Deployment's pods over zones and nodes, as a preference by default", async () => {
    const r = await render({ connectors: [ACH] });
    for (const [name, d] of r.deployments) {
      const spread = d.spec!.template.spec!.topologySpreadConstraints ?? [];
      expect(spread.map((t) => t.topologyKey), name).toEqual(["topology.kubernetes.io/zone", "kubernetes.io/hostname"]);
      for (const t of spread) {
        expect(t.whenUnsatisfiable, name).toBe("ScheduleAnyway");
        expect(t.maxSkew, name).toBe(1);
        expect(selects(t.labelSelector!.matchLabels, d), `${name} spreads its own pods`).toBe(true);
      }
    }
    const strict = await render({ topologySpread: { whenUnsatisfiable: "DoNotSchedule" } });
    for (const [name, d] of strict.deployments) for (const t of d.spec!.template.spec!.topologySpreadConstraints!) expect(t.whenUnsatisfiable, name).toBe("DoNotSchedule");
  });

  it("rolls the pods when the contents of the chart's Secret change, and only then", async () => {
    const checksums = (r: Rendered) =>
      new Map([...r.deployments].map(([name, d]) => [name, Object.entries(d.spec!.template.metadata!.annotations ?? {}).filter(([k]) => k.startsWith("checksum/"))]));
    const base = checksums(await render({ connectors: [ACH] }));
    const moved = checksums(await render({ connectors: [ACH], infra: { databaseUrl: "postgres://corridor@db.internal:5432/corridor" } }));
    const unrelated = checksums(await render({ connectors: [ACH], otel: { endpoint: "http://elsewhere:4318" } }));
    expect([...base.keys()].sort()).toEqual([...deployables, "connector-ach-nacha"].sort());
    for (const [name, sums] of base) {
      expect(sums.map(([k]) => k), name).toContain("checksum/infra-secret");
      const secretSum = (s: [string, string][]) => s.find(([k]) => k === "checksum/infra-secret")![1];
      expect(secretSum(moved.get(name)!), `${name} rolls when DATABASE_URL changes`).not.toBe(secretSum(sums));
      expect(unrelated.get(name), `${name}: checksums unchanged by other values`).toEqual(sums);
    }
  });

  it("runs each rail connector as one Deployment of the image (`connector <name>`), one replica replaced by Recreate, its secrets as mounted files", async () => {
    expect((await render()).deployments.size, "no connectors by default").toBe(deployables.length);
    const r = await render({ connectors: [ACH, { name: "sepa-iso20022", enabled: false }], autoscaling: { enabled: true } });
    expect([...r.deployments.keys()].filter((n) => n.startsWith("connector-"))).toEqual(["connector-ach-nacha"]);
    const d = r.deployments.get("connector-ach-nacha")!;
    expect(d.spec!.replicas).toBe(1);
    expect(d.spec!.strategy).toEqual({ type: "Recreate" });
    const c = containerOf(r, "connector-ach-nacha");
    expect(c.command).toBeUndefined();
    expect(c.args).toEqual(["connector", "ach-nacha"]);
    expect(c.image).toBe(containerOf(r, "ledger").image);
    // Health and the operator's ConnectorAdminService on runConnector's port, behind a ClusterIP
    // Service of the connector's name that selects its pods only (the operator CLI's --connector-url).
    expect(c.ports!.map((p) => p.containerPort)).toEqual([CONNECTOR_PORT]);
    expect(plainEnv(c).PORT).toBe(String(CONNECTOR_PORT));
    for (const probe of [c.startupProbe, c.readinessProbe, c.livenessProbe]) expect(probe?.grpc?.port).toBe(CONNECTOR_PORT);
    expect([...r.services.keys()].filter((n) => n.includes("connector"))).toEqual(["connector-ach-nacha"]);
    const svc = r.services.get("connector-ach-nacha")!;
    expect(svc.spec!.type).toBe("ClusterIP");
    expect(svc.spec!.ports).toEqual([{ name: "grpc", port: CONNECTOR_PORT, targetPort: "grpc", appProtocol: "kubernetes.io/h2c" }]);
    expect(c.ports!.find((p) => p.name === "grpc")?.containerPort).toBe(CONNECTOR_PORT);
    for (const [name, dep] of r.deployments) {
      const podLabels = dep.spec!.template.metadata!.labels!;
      const selected = Object.entries(svc.spec!.selector!).every(([k, v]) => podLabels[k] === v);
      expect(selected, `Service connector-ach-nacha selects ${name}`).toBe(name === "connector-ach-nacha");
    }
    // Another port moves the Service with it.
    const moved = await render({ connectors: [{ ...ACH, port: 9310 }] });
    expect(moved.services.get("connector-ach-nacha")!.spec!.ports![0]!.port).toBe(9310);
    expect(containerOf(moved, "connector-ach-nacha").ports![0]!.containerPort).toBe(9310);
    // Connection settings from the infra Secret, as runConnector reads them.
    expect(Object.keys(secretEnv(c)).sort()).toEqual([...connectorInfraKeys].sort());
    for (const ref of Object.values(secretEnv(c))) expect(ref.secret).toBe(`${RELEASE}-infra`);
    const env = plainEnv(c);
    expect(env.ACH_SFTP_HOST).toBe("sftp.bank.example");
    expect(env.OTEL_SERVICE_NAME).toBe("connector-ach-nacha");
    // Each secret setting as <KEY>_FILE, pointing at the Secret's key mounted read-only; never the value in env.
    const pod = d.spec!.template.spec!;
    for (const [setting, ref] of Object.entries(ACH.secretFiles)) {
      expect(env, setting).not.toHaveProperty(setting);
      const file = env[`${setting}_FILE`]!;
      const mount = c.volumeMounts!.find((m) => file.startsWith(`${m.mountPath}/`))!;
      expect(mount, `${setting}_FILE is on a mount`).toBeDefined();
      expect(mount.readOnly).toBe(true);
      const volume = pod.volumes!.find((v) => v.name === mount.name)!;
      expect(volume.secret?.secretName).toBe(ref.secret);
      expect(volume.secret?.items).toEqual([{ key: ref.key, path: file.slice(mount.mountPath.length + 1) }]);
      // Readable by the pod's user through its group (fsGroup), by nobody else.
      expect(volume.secret?.defaultMode).toBe(0o440);
    }
    expect(pod.securityContext?.fsGroup).toBe(pod.securityContext?.runAsGroup);
    expect(c.securityContext?.readOnlyRootFilesystem).toBe(true);
    // One replica by design: no budget (it would block every drain) and no autoscaler.
    expect(r.pdbs.has("connector-ach-nacha")).toBe(false);
    expect(r.hpas.has("connector-ach-nacha")).toBe(false);
    // Never two at once, never a value the Secret owns, never a secret twice.
    expect(await helmFails(["template", RELEASE, chart, ...valuesArgs({ connectors: [{ ...ACH, replicas: 2 }] })])).toMatch(/replicas/);
    expect(await helmFails(["template", RELEASE, chart, ...valuesArgs({ connectors: [{ ...ACH, env: { DATABASE_URL: "postgres://x" } }] })])).toMatch(/DATABASE_URL is set in env for connector ach-nacha/);
    expect(await helmFails(["template", RELEASE, chart, ...valuesArgs({ connectors: [{ ...ACH, env: { ACH_SFTP_HOST_KEY: "ssh-ed25519 AAAA" } }] })])).toMatch(/ACH_SFTP_HOST_KEY of connector ach-nacha is both in env and in secretFiles/);
    expect(await helmFails(["template", RELEASE, chart, ...valuesArgs({ connectors: [ACH, ACH] })])).toMatch(/ach-nacha is listed twice/);
    expect(await helmFails(["template", RELEASE, chart, ...valuesArgs({ connectors: [{ name: "sandbox" }] })])).toMatch(/sandbox|not/);
  });

  it("ships the call graph of the code (files/service-calls.yaml)", () => {
    expect(callGraph.gateway).toEqual([...SERVICE_NAMES].sort());
    const shipped = parseYaml(source("helm/corridor/files/service-calls.yaml")) as Record<string, string[]>;
    expect(Object.fromEntries(Object.entries(shipped).map(([k, v]) => [k, [...v].sort()]))).toEqual(callGraph);
  });

  it("renders no NetworkPolicy by default, and refuses to render them without where the infrastructure is", async () => {
    expect((await render()).networkPolicies.size).toBe(0);
    expect(await helmFails(["template", RELEASE, chart, ...valuesArgs({ networkPolicy: { enabled: true } })])).toMatch(/networkPolicy\.egress\.postgres names no destination/);
    expect(
      await helmFails(["template", RELEASE, chart, ...valuesArgs({ ...NETPOL, connectors: [{ ...ACH, sftp: undefined }] })]),
    ).toMatch(/ach-nacha has no sftp\.cidrs or sftp\.peers/);
  });

  it("isolates every pod with NetworkPolicies: the gateway open on its port, each service reached only by its callers, Prometheus on the metrics port, egress only where needed", async () => {
    const r = await render({ ...NETPOL, connectors: [ACH], networkPolicy: { ...NETPOL.networkPolicy, extraEgress: { "quotes-fx": [{ to: [{ ipBlock: { cidr: "192.0.2.10/32" } }], ports: [{ port: 443, protocol: "TCP" }] }] } } });
    expect([...r.networkPolicies.keys()].sort()).toEqual([...deployables, "connector-ach-nacha", `${RELEASE}-migrations`].sort());
    const policyOf = (name: string) => r.networkPolicies.get(name)!;
    for (const [name, d] of r.deployments) {
      const np = policyOf(name);
      expect(np.spec!.policyTypes, name).toEqual(["Ingress", "Egress"]);
      expect(selects(np.spec!.podSelector.matchLabels, d), `${name}'s policy selects its pods`).toBe(true);
      for (const [other, od] of r.deployments) if (other !== name) expect(selects(np.spec!.podSelector.matchLabels, od), `${name}'s policy selects ${other}`).toBe(false);
    }
    const portsOf = (rule: { ports?: { port?: number | string; protocol?: string }[] }) => (rule.ports ?? []).map((p) => p.port);
    for (const name of deployables) {
      const np = policyOf(name);
      const port = r.services.get(name)!.spec!.ports![0]!.port;
      const ingress = np.spec!.ingress!;
      // Every ingress rule names a port; the only ports are the service's and the metrics port.
      for (const rule of ingress) expect(portsOf(rule).length, name).toBeGreaterThan(0);
      const onPort = ingress.filter((rule) => portsOf(rule).includes(port));
      expect(onPort, name).toHaveLength(1);
      if (name === "gateway") expect(onPort[0]!.from, "the gateway takes traffic from anywhere").toBeUndefined();
      else expect(podNames(onPort[0]!.from as never), `${name}'s callers`).toEqual(callersOf(name));
      const metrics = ingress.filter((rule) => portsOf(rule).includes(9464));
      expect(metrics, name).toHaveLength(1);
      expect(metrics[0]!.from, `${name}: metrics from Prometheus only`).toEqual([{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "monitoring" } }, podSelector: { matchLabels: { "app.kubernetes.io/name": "prometheus" } } }]);
      expect(ingress, name).toHaveLength(name === "gateway" || callersOf(name).length > 0 ? 2 : 1);

      const egress = np.spec!.egress!;
      for (const rule of egress) expect(rule.to?.length, `${name}: no egress rule open to everything`).toBeGreaterThan(0);
      // The services it calls, each on its port.
      const ofRelease = (rule: (typeof egress)[number]) => (rule.to ?? []).some((p) => p.podSelector?.matchLabels?.["app.kubernetes.io/instance"] === RELEASE);
      const toPods = egress.filter(ofRelease);
      expect(toPods.flatMap((rule) => podNames(rule.to as never)).sort(), `${name} calls`).toEqual(callGraph[name]);
      for (const rule of toPods) {
        expect(rule.to, name).toHaveLength(1);
        const callee = podNames(rule.to as never)[0]!;
        expect(portsOf(rule), `${name} → ${callee}`).toEqual([r.services.get(callee)!.spec!.ports![0]!.port]);
      }
      // DNS on 53, UDP and TCP.
      expect(egress.some((rule) => portsOf(rule).includes(53) && rule.ports!.some((p) => p.protocol === "UDP")), `${name} resolves names`).toBe(true);
      // Postgres, Redis and Kafka exactly as far as it reads their settings.
      const reaches = (cidrOrApp: string) => egress.some((rule) => (rule.to ?? []).some((p) => p.ipBlock?.cidr === cidrOrApp || p.podSelector?.matchLabels?.app === cidrOrApp));
      expect(reaches("10.10.0.0/24"), `${name} → postgres`).toBe(infraKeysRead[name]!.includes("DATABASE_URL"));
      expect(reaches("redis"), `${name} → redis`).toBe(infraKeysRead[name]!.includes("REDIS_URL"));
      expect(reaches("10.20.0.0/24"), `${name} → kafka`).toBe(infraKeysRead[name]!.includes("KAFKA_BROKERS"));
      // The webhook targets: notifications alone, public addresses on 443 and 80, never the metadata address.
      const internet = egress.filter((rule) => (rule.to ?? []).some((p) => p.ipBlock?.cidr === "0.0.0.0/0"));
      if (name === "notifications") {
        expect(internet).toHaveLength(1);
        expect(portsOf(internet[0]!).sort()).toEqual([443, 80].sort());
        const except = internet[0]!.to![0]!.ipBlock!.except!;
        for (const blocked of ["169.254.0.0/16", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "127.0.0.0/8"]) expect(except, blocked).toContain(blocked);
      } else expect(internet, `${name} has no way out to the internet`).toHaveLength(0);
      expect(reaches("192.0.2.10/32"), `${name}: extraEgress`).toBe(name === "quotes-fx");
    }
    // A connector: no ingress (unless the operator's peers are named); DNS, Postgres, Kafka and its bank's SFTP host on 22.
    const conn = policyOf("connector-ach-nacha");
    expect(conn.spec!.ingress).toEqual([]);
    const toolbox = [{ podSelector: { matchLabels: { "app.kubernetes.io/name": "corridor-toolbox" } } }];
    const opened = (await render({ ...NETPOL, connectors: [ACH], networkPolicy: { ...NETPOL.networkPolicy, connectors: { adminFrom: toolbox } } })).networkPolicies.get("connector-ach-nacha")!;
    expect(opened.spec!.ingress).toEqual([{ ports: [{ port: CONNECTOR_PORT, protocol: "TCP" }], from: toolbox }]);
    const sftp = conn.spec!.egress!.filter((rule) => (rule.to ?? []).some((p) => p.ipBlock?.cidr === "203.0.113.10/32"));
    expect(sftp).toHaveLength(1);
    expect(portsOf(sftp[0]!)).toEqual([22]);
    const connCidrs = conn.spec!.egress!.flatMap((rule) => (rule.to ?? []).map((p) => p.ipBlock?.cidr)).filter(Boolean);
    expect(connCidrs.sort()).toEqual(["10.10.0.0/24", "10.20.0.0/24", "203.0.113.10/32"].sort());
    // The migrations Job's pod: a hook policy of its own (it runs before the release's objects exist), Postgres and DNS only.
    const mig = policyOf(`${RELEASE}-migrations`);
    expect(hooks(mig)).toBe("pre-install,pre-upgrade");
    const jobPod = r.jobs.get(`${RELEASE}-migrations`)!.spec!.template.metadata!.labels!;
    expect(Object.entries(mig.spec!.podSelector.matchLabels!).every(([k, v]) => jobPod[k] === v)).toBe(true);
    expect(mig.spec!.ingress).toEqual([]);
    expect(mig.spec!.egress!.flatMap((rule) => (rule.to ?? []).map((p) => p.ipBlock?.cidr)).filter(Boolean)).toEqual(["10.10.0.0/24"]);
    // The gateway can be limited to the ingress controller.
    const fenced = await render({ ...NETPOL, networkPolicy: { ...NETPOL.networkPolicy, gateway: { from: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "ingress-nginx" } } }] } } });
    const gw = fenced.networkPolicies.get("gateway")!.spec!.ingress!.find((rule) => portsOf(rule).includes(8080))!;
    expect(gw.from).toEqual([{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "ingress-nginx" } } }]);
  });

  it("renders Tilt's dev values: one replica each, the image Tilt builds", async () => {
    const r = await render(undefined, ["-f", join(root, "deploy", "dev", "values-dev.yaml")]);
    const dev = parseYaml(source("deploy/dev/values-dev.yaml")) as { image: { repository: string; tag: string } };
    for (const name of deployables) {
      expect(r.deployments.get(name)!.spec!.replicas, name).toBe(1);
      expect(containerOf(r, name).image, name).toBe(`${dev.image.repository}:${dev.image.tag}`);
    }
  });
});
