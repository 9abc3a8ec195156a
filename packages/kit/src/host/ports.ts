import type { ServiceName } from "../service.js";

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

export function serviceUrl(service: ServiceName, env: NodeJS.ProcessEnv = process.env): string {
  return env[serviceUrlEnvKey(service)] ?? `http://127.0.0.1:${DEFAULT_SERVICE_PORTS[service]}`;
}
