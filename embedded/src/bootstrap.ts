import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { AuthSessionsService } from "@corridor/proto/corridor/auth_sessions/v1/auth_sessions_service_pb.js";
import { PlatformAdminService } from "@corridor/proto/corridor/auth_sessions/v1/platform_admin_service_pb.js";
import { Environment } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";

export interface SandboxCredentials {
  platformId: string;
  clientId: string;
  /** Undefined when the platform exists but its secret was shown at an earlier start and not saved. */
  clientSecret?: string;
  createdNow: boolean;
}

/**
 * First-start bootstrap: make sure a sandbox platform exists and say how to call it.
 *
 * - With fixed credentials (CORRIDOR_BOOTSTRAP_CLIENT_ID/SECRET): if they authenticate, use them;
 *   otherwise create a sandbox platform whose first token has exactly those credentials.
 * - Without: create one sandbox platform when there is no platform at all. Its credentials are
 *   kept in `credentialsFile` (mode 0600, in the git-ignored data folder) so later starts can print
 *   them again; the database itself only ever holds the secret's hash.
 */
export async function ensureSandboxPlatform(opts: {
  transport: Transport;
  credentialsFile: string;
  clientId?: string;
  clientSecret?: string;
}): Promise<SandboxCredentials> {
  const admin = createClient(PlatformAdminService, opts.transport);
  const auth = createClient(AuthSessionsService, opts.transport);

  if (opts.clientId && opts.clientSecret) {
    try {
      const who = await auth.authenticate({ clientId: opts.clientId, clientSecret: opts.clientSecret });
      return { platformId: who.platformId, clientId: opts.clientId, clientSecret: opts.clientSecret, createdNow: false };
    } catch (err) {
      if (ConnectError.from(err).code !== Code.Unauthenticated) throw err;
    }
    const created = await admin.createPlatform({
      name: "Sandbox",
      environment: Environment.SANDBOX,
      clientId: opts.clientId,
      clientSecret: opts.clientSecret,
    });
    return { platformId: created.platform!.id, clientId: opts.clientId, clientSecret: opts.clientSecret, createdNow: true };
  }

  const saved = readSaved(opts.credentialsFile);
  const { platforms } = await admin.listPlatforms({});
  if (saved && platforms.some((p) => p.id === saved.platformId)) return { ...saved, createdNow: false };
  if (platforms.length > 0) {
    const first = platforms.find((p) => p.environment === Environment.SANDBOX) ?? platforms[0]!;
    return { platformId: first.id, clientId: "(shown at first start)", createdNow: false };
  }

  const created = await admin.createPlatform({ name: "Sandbox", environment: Environment.SANDBOX });
  const creds = { platformId: created.platform!.id, clientId: created.token!.clientId, clientSecret: created.clientSecret };
  mkdirSync(dirname(opts.credentialsFile), { recursive: true });
  writeFileSync(opts.credentialsFile, JSON.stringify(creds, null, 2) + "\n", { mode: 0o600 });
  chmodSync(opts.credentialsFile, 0o600);
  return { ...creds, createdNow: true };
}

function readSaved(file: string): Omit<SandboxCredentials, "createdNow"> | undefined {
  if (!existsSync(file)) return undefined;
  try {
    const parsed = JSON.parse(readFileSync(file, "utf8"));
    if (typeof parsed.platformId === "string" && typeof parsed.clientId === "string") return parsed;
  } catch {
    // a damaged file is treated as absent
  }
  return undefined;
}

export function banner(opts: { mode: string; url: string; creds: SandboxCredentials; extra?: string[] }): string {
  const api = `${opts.url}/2025-10-13`;
  const { creds } = opts;
  const secret = creds.clientSecret ?? "(shown at first start; create another token with POST /tokens)";
  return [
    "",
    `Corridor is running (${opts.mode} mode)`,
    `  API base URL   ${api}`,
    `  API reference  ${api}/docs`,
    `  OpenAPI        ${api}/openapi.json`,
    "",
    `Sandbox platform ${creds.platformId}${creds.createdNow ? " (created now)" : ""}`,
    `  clientId       ${creds.clientId}`,
    `  clientSecret   ${secret}`,
    "",
    "Try it:",
    `  curl -u '${creds.clientId}:${creds.clientSecret ?? "<secret>"}' ${api}/config`,
    ...(opts.extra ?? []),
    "",
  ].join("\n");
}
