import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient, type Transport } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { createProcessLogger, type ServiceName } from "@corridor/kit";
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
  /** fetch against the versioned API with this caller's Basic credentials. */
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
  raw(method: string, path: string, init?: { body?: string; headers?: Record<string, string> }): Promise<ApiResponse>;
  /** A service's Connect transport, behind the gateway: for observing state no public route shows. */
  transportFor(service: ServiceName): Transport;
  stop(): Promise<void>;
}

async function send(url: string, method: string, init: { body?: string; headers?: Record<string, string> }): Promise<ApiResponse> {
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

/** Starts the system in this project's mode (embedded: in this process; split: shared processes). */
export async function startTestSystem(): Promise<TestSystem> {
  let url: string;
  let transportFor: (service: ServiceName) => Transport;
  let stop: () => Promise<void>;

  if (mode === "split") {
    const info = inject("splitSystem");
    if (!info) throw new Error(inject("splitSkipReason"));
    url = info.url;
    const transports = new Map<ServiceName, Transport>();
    transportFor = (service) => {
      let t = transports.get(service);
      if (!t) transports.set(service, (t = createGrpcTransport({ baseUrl: info.serviceUrls[service] })));
      return t;
    };
    stop = async () => {};
  } else {
    const fresh = process.env.DATABASE_URL ? await createFreshDatabase(process.env.DATABASE_URL, "corridor_e2e", { migrated: true }) : undefined;
    const system = await startEmbedded({
      log: createProcessLogger("e2e", process.env.LOG_LEVEL ?? "warn"),
      databaseUrl: fresh?.url,
      dataDir: fresh ? undefined : undefined, // PGlite in memory
      httpHost: "127.0.0.1",
      httpPort: 0,
    });
    url = system.url;
    transportFor = system.transportFor;
    stop = async () => {
      await system.stop();
      await fresh?.drop();
    };
  }

  const api = `${url}/2025-10-13`;
  const admin = createClient(PlatformAdminService, transportFor("auth-sessions"));
  const as = (clientId: string, clientSecret: string, platformId = ""): Caller => ({
    platformId,
    clientId,
    clientSecret,
    call(method, path, body, headers = {}) {
      const auth = `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString("base64")}`;
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
    async createPlatform(opts = {}) {
      const res = await admin.createPlatform({
        name: opts.name ?? "e2e platform",
        environment: opts.environment === "PRODUCTION" ? Environment.PRODUCTION : Environment.SANDBOX,
        isRegulatedFinancialInstitution: opts.regulated ?? false,
      });
      return as(res.token!.clientId, res.clientSecret, res.platform!.id);
    },
    stop,
  };
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
