import { env } from "../config.js";
import { SERVICE_NAMES, type ServiceName } from "../service.js";

/** Default ports of the split and cluster modes (gateway 8080). */
export const DEFAULT_SERVICE_PORTS: Record<ServiceName, number> = {
  "auth-sessions": 8101,
  ledger: 8102,
  "quotes-fx": 8103,
  agents: 8104,
  "customers-kyc": 8105,
  notifications: 8106,
  sandbox: 8107,
};

/** CORRIDOR_AUTH_SESSIONS_URL and friends: where a service is reached in split/cluster mode. */
export function serviceUrlEnvKey(service: ServiceName): string {
  return `CORRIDOR_${service.replace(/-/g, "_").toUpperCase()}_URL`;
}

/**
 * The CORRIDOR_<SERVICE>_URL settings of a config schema (the gateway's, every service's): where
 * each service answers, Connect over h2c. One base URL (a Kubernetes Service, one process), or
 * its replicas' base URLs comma-separated: createServiceTransport sends each call to the next in
 * turn, skipping one that refuses the connection (`start:split --replicas N`).
 */
export function serviceUrlSettings() {
  return Object.fromEntries(SERVICE_NAMES.map((s) => [serviceUrlEnvKey(s), env.urls(defaultServiceUrl(s))])) as Record<string, ReturnType<typeof env.urls>>;
}

/** Where a service answers when its URL setting is not given: its default port on loopback. */
const defaultServiceUrl = (service: ServiceName) => `http://127.0.0.1:${DEFAULT_SERVICE_PORTS[service]}`;

/** A service's URL setting (one base URL or several, comma-separated) from a loaded config or the environment. */
export function serviceUrl(service: ServiceName, env: Record<string, unknown> = process.env): string {
  const value = env[serviceUrlEnvKey(service)];
  return typeof value === "string" && value !== "" ? value : defaultServiceUrl(service);
}

/**
 * Where replica `replica` (1-based) of a service listens in split mode (`start:split`), from
 * CORRIDOR_SPLIT_PORT_BASE: replica 1 on the service's own port (base + 1 + its place in
 * SERVICE_NAMES), replica r > 1 on base + 10 r + 1 + its place.
 */
export function splitReplicaPort(base: number, service: ServiceName, replica: number): number {
  const place = SERVICE_NAMES.indexOf(service);
  return replica === 1 ? base + 1 + place : base + 10 * replica + 1 + place;
}
