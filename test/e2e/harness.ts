import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient, type Transport } from "@connectrpc/connect";
import { startConnector, type ConnectorDefinition, type RunningConnector } from "@corridor/connector";
import { createBus, createProcessLogger, createServiceTransport, systemClock, type ServiceName, type z } from "@corridor/kit";
import { openTestDatabase } from "@corridor/kit/testing";
import { startEmbedded } from "@corridor/embedded";
import { PlatformAdminService } from "@corridor/proto/corridor/auth_sessions/v1/platform_admin_service_pb.js";
import { Environment } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import { inject } from "vitest";
import { createFreshDatabase } from "../infra/databases.js";

export type Mode = "embedded" | "split";
export const mode: Mode = process.env.CORRIDOR_E2E_MODE === "split" ? "split" : "embedded";

/** Why this file's suites cannot run in this mode here, or "" when they can. */
export function skipReason(): string {
  return mode === "split" ? inject("splitSkipReason") : "";
}

export interface Caller {
  platformId: string;
  clientId: string;
  clientSecret: string;
  /** fetch against the versioned API with this caller's Basic credentials (a FormData body is sent as multipart/form-data). */
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<ApiResponse>;
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  body: any;
}

export interface TestSystem {
  /** http://127.0.0.1:port (no version). */
  url: string;
  api: string;
  createPlatform(opts?: { environment?: "SANDBOX" | "PRODUCTION"; regulated?: boolean; name?: string }): Promise<Caller>;
  /** A caller with arbitrary credentials (for auth failure tests). */
  as(clientId: string, clientSecret: string): Caller;
  raw(method: string, path: string, init?: { body?: string | FormData; headers?: Record<string, string> }): Promise<ApiResponse>;
  /** A service's Connect transport, behind the gateway: for observing state no public route shows. */
  transportFor(service: ServiceName): Transport;
  /**
   * Runs a rail connector (@corridor/connector) beside the system, as its own deployable would:
   * embedded, on the system's bus and database; split, on the shared Kafka broker (the system's
   * topic prefix) with a database of its own. Stopped with the system.
   */
  startConnector<S extends z.ZodObject>(definition: ConnectorDefinition<S>, env?: NodeJS.ProcessEnv): Promise<RunningConnector>;
  stop(): Promise<void>;
}

async function sendRequest(url: string, method: string, init: { body?: string | FormData; headers?: Record<string, string> }): Promise<ApiResponse> {
  const res = await fetch(url, { method, body: init.body, headers: init.headers });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON (for example the reference page)
  }
  return { status: res.status, headers: res.headers, body };
}

/**
 * Starts the system in this project's mode (embedded: in this process; split: shared processes).
 * `databaseUrl` (embedded only): run on that database, which the caller owns (it is not dropped
 * at stop), instead of a fresh copy of the migrated template: the restore drill's source and
 * restored databases.
 */
export async function startTestSystem(opts: { databaseUrl?: string } = {}): Promise<TestSystem> {
  let url: string;
  let transportFor: (service: ServiceName) => Transport;
  let stop: () => Promise<void>;
  let connectorHost: (name: string) => Promise<{ deps: Omit<Parameters<typeof startConnector>[1], "env">; close(): Promise<void> }>;
  const connectors: { stop(): Promise<void> }[] = [];
  const connectorLog = createProcessLogger("e2e-connector", process.env.LOG_LEVEL ?? "warn");

  if (mode === "split" && opts.databaseUrl) throw new Error("startTestSystem({ databaseUrl }) runs the embedded system only");
  if (mode === "split") {
    const info = inject("splitSystem");
    if (!info) throw new Error(inject("splitSetupError") || inject("splitSkipReason"));
    url = info.url;
    const transports = new Map<ServiceName, Transport>();
    transportFor = (service) => {
      let t = transports.get(service);
      // With replicas the URL lists them: the kit's transport calls them in turn, as the processes do.
      if (!t) transports.set(service, (t = createServiceTransport({ baseUrl: info.serviceUrls[service] })));
      return t;
    };
    stop = async () => {};
    connectorHost = async (name) => {
      const bus = await createBus({ kafkaBrokers: process.env.KAFKA_BROKERS!.split(","), clientId: name, topicPrefix: info.kafkaTopicPrefix, numPartitions: info.kafkaTopicPartitions, log: connectorLog });
      const { db, drop } = await openTestDatabase();
      return {
        deps: { db, bus, clock: systemClock, log: connectorLog },
        async close() {
          await bus.close();
          await drop();
        },
      };
    };
  } else {
    // CORRIDOR_E2E_DATABASE=pglite (the e2e-pglite project): npm start's own embedded PGlite even
    // where a PostgreSQL is at hand, so what only PGlite's single session shows (an RPC awaited
    // while a transaction holds it) fails a suite in CI too.
    const pglite = process.env.CORRIDOR_E2E_DATABASE === "pglite";
    const fresh = opts.databaseUrl || pglite ? undefined : process.env.DATABASE_URL ? await createFreshDatabase(process.env.DATABASE_URL, "corridor_e2e", { migrated: true }) : undefined;
    const system = await startEmbedded({
      log: createProcessLogger("e2e", process.env.LOG_LEVEL ?? "warn"),
      databaseUrl: opts.databaseUrl ?? fresh?.url,
      // As npm start runs by default (DATABASE_PREPARED_STATEMENTS).
      preparedStatements: true,
      dataDir: fresh ? undefined : undefined, // PGlite in memory
      httpHost: "127.0.0.1",
      httpPort: 0,
    });
    url = system.url;
    transportFor = system.transportFor;
    connectorHost = async () => ({ deps: { db: system.db, bus: system.bus, clock: systemClock, log: connectorLog }, close: async () => {} });
    stop = async () => {
      await system.stop();
      await fresh?.drop();
    };
  }

  const api = `${url}/2025-10-13`;
  const admin = createClient(PlatformAdminService, transportFor("auth-sessions"));
  // Every answer of the versioned API is checked against the served OpenAPI when the system stops.
  const observed: Observed[] = [];
  const send = async (target: string, method: string, init: { body?: string | FormData; headers?: Record<string, string> }) => {
    const res = await sendRequest(target, method, init);
    if (target.startsWith(`${api}/`)) {
      const code = res.body && typeof res.body === "object" && typeof res.body.code === "string" ? res.body.code : undefined;
      observed.push({ method, path: new URL(target).pathname.slice("/2025-10-13".length), status: res.status, code });
    }
    return res;
  };
  const as = (clientId: string, clientSecret: string, platformId = ""): Caller => ({
    platformId,
    clientId,
    clientSecret,
    call(method, path, body, headers = {}) {
      const auth = `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString("base64")}`;
      if (body instanceof FormData) return send(`${api}${path}`, method, { body, headers: { authorization: auth, ...headers } });
      return send(`${api}${path}`, method, {
        body: body === undefined ? undefined : JSON.stringify(body),
        headers: { authorization: auth, ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
      });
    },
  });

  return {
    url,
    api,
    as: (id, secret) => as(id, secret),
    raw: (method, path, init = {}) => send(`${url}${path}`, method, init),
    transportFor,
    async startConnector(definition, env = {}) {
      const host = await connectorHost(definition.name);
      const running = await startConnector(definition, { ...host.deps, env });
      connectors.push({
        async stop() {
          await running.stop();
          await host.close();
        },
      });
      return running;
    },
    async createPlatform(opts = {}) {
      const res = await admin.createPlatform({
        name: opts.name ?? "e2e platform",
        environment: opts.environment === "PRODUCTION" ? Environment.PRODUCTION : Environment.SANDBOX,
        isRegulatedFinancialInstitution: opts.regulated ?? false,
      });
      return as(res.token!.clientId, res.clientSecret, res.platform!.id);
    },
    async stop() {
      let problems: string[] = [];
      try {
        problems = await undocumentedAnswers(api, observed);
      } finally {
        for (const c of connectors.splice(0)) await c.stop();
        await stop();
      }
      if (problems.length) {
        throw new Error(
          `answers the served OpenAPI does not document (declare the code in gateway/src/route-errors.ts, or document the status):\n${problems.join("\n")}`,
        );
      }
    },
  };
}

interface Observed {
  method: string;
  path: string;
  status: number;
  code?: string;
}

type OpenApiOperation = { responses?: Record<string, { content?: Record<string, { schema?: { allOf?: { properties?: { code?: { enum?: string[] } } }[] } }> }> };

/**
 * The observed answers the served OpenAPI does not predict: a status the matched operation does not
 * list, or an error code outside the enum it documents for that status. Requests to paths or
 * methods the API does not serve (router 404/405) are not an operation's answers and are skipped.
 */
async function undocumentedAnswers(api: string, observed: readonly Observed[]): Promise<string[]> {
  if (!observed.length) return [];
  const doc = (await (await fetch(`${api}/openapi.json`)).json()) as { paths: Record<string, Record<string, OpenApiOperation>> };
  const templates = Object.keys(doc.paths).map((p) => ({ path: p, segments: p.split("/").slice(1) }));
  const match = (path: string) => {
    const segments = path.split("/").slice(1);
    let best: { path: string; literal: number } | undefined;
    for (const t of templates) {
      if (t.segments.length !== segments.length) continue;
      let literal = 0;
      const fits = t.segments.every((s, i) => {
        if (/^\{[^}]+\}$/.test(s)) return segments[i] !== "";
        literal++;
        return s === segments[i];
      });
      if (fits && (!best || literal > best.literal)) best = { path: t.path, literal };
    }
    return best?.path;
  };
  const problems = new Set<string>();
  for (const o of observed) {
    const path = match(o.path);
    const op = path ? doc.paths[path]?.[o.method.toLowerCase()] : undefined;
    if (!path || !op) continue;
    const response = op.responses?.[String(o.status)];
    const where = `${o.method} ${path} → ${o.status}`;
    if (!response) {
      problems.add(`${where}${o.code ? ` ${o.code}` : ""}: status not documented`);
      continue;
    }
    if (o.status >= 400 && o.code) {
      const codes = response.content?.["application/json"]?.schema?.allOf?.map((s) => s.properties?.code?.enum).find((e) => e !== undefined);
      if (!codes?.includes(o.code)) problems.add(`${where} ${o.code}: code not documented`);
    }
  }
  return [...problems].sort();
}

/** Polls `check` until it returns a value (event flows are asynchronous), failing after `ms`. */
export async function eventually<T>(check: () => Promise<T | undefined>, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  let lastError: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) throw lastError ?? new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 100));
  }
}

export const tmp = () => mkdtempSync(join(tmpdir(), "corridor-e2e-"));
