import { mkdtempSync, readFileSync, statSync, chmodSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code, ConnectError, createRouterTransport } from "@connectrpc/connect";
import { AuthSessionsService } from "@corridor/proto/corridor/auth_sessions/v1/auth_sessions_service_pb.js";
import { PlatformAdminService } from "@corridor/proto/corridor/auth_sessions/v1/platform_admin_service_pb.js";
import { Environment } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import { describe, expect, it } from "vitest";
import { banner, ensureSandboxPlatform, readyInfo } from "../src/bootstrap.js";

/** auth-sessions as the bootstrap sees it: platforms in memory, fixed credentials authenticate. */
function fakeAuthSessions() {
  const platforms: { id: string; name: string; environment: Environment }[] = [];
  const secrets = new Map<string, { platformId: string; secret: string }>();
  let n = 0;
  const transport = createRouterTransport((router) => {
    router.service(PlatformAdminService, {
      async createPlatform(req) {
        const platform = { id: `Platform:${++n}`, name: req.name, environment: req.environment };
        platforms.push(platform);
        const clientId = req.clientId || `cli_generated${n}`;
        const clientSecret = req.clientSecret || `generated-secret-${n}-${"x".repeat(30)}`;
        secrets.set(clientId, { platformId: platform.id, secret: clientSecret });
        return { platform, token: { id: `Token:${n}`, clientId }, clientSecret: req.clientSecret ? "" : clientSecret };
      },
      async listPlatforms() {
        return { platforms };
      },
    });
    router.service(AuthSessionsService, {
      async authenticate(req) {
        const s = secrets.get(req.clientId);
        if (!s || s.secret !== req.clientSecret) throw new ConnectError("unauthorized", Code.Unauthenticated);
        return { platformId: s.platformId, environment: Environment.SANDBOX };
      },
    });
  });
  return { transport };
}

const dataDir = () => mkdtempSync(join(tmpdir(), "corridor-bootstrap-"));
const opts = { mode: "embedded", url: "http://127.0.0.1:8080" };

describe("startup banner and the sandbox credentials", () => {
  it("prints the generated client secret on the start that creates it, and only the clientId and the 0600 file on later starts", async () => {
    const { transport } = fakeAuthSessions();
    const credentialsFile = join(dataDir(), "sandbox-credentials.json");

    const first = await ensureSandboxPlatform({ transport, credentialsFile });
    expect(first.createdNow).toBe(true);
    const secret = first.clientSecret!;
    expect(secret).toMatch(/^generated-secret-/);
    const firstBanner = banner({ ...opts, creds: first });
    expect(firstBanner).toContain(secret);
    expect(firstBanner).toContain(first.clientId);
    expect(firstBanner).toContain(`${opts.url}/console/`);
    expect(firstBanner).toContain(credentialsFile);
    expect(statSync(credentialsFile).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(credentialsFile, "utf8")).clientSecret).toBe(secret);

    for (let restart = 0; restart < 2; restart++) {
      const again = await ensureSandboxPlatform({ transport, credentialsFile });
      expect(again).toMatchObject({ platformId: first.platformId, clientId: first.clientId, createdNow: false, secretSource: "file", credentialsFile });
      expect(again.clientSecret).toBeUndefined();
      const later = banner({ ...opts, creds: again });
      expect(later).not.toContain(secret);
      expect(later).toContain(first.clientId);
      expect(later).toContain(`${credentialsFile} (mode 0600)`);
      expect(JSON.stringify(readyInfo(opts.url, again))).not.toContain(secret);
    }
    expect(JSON.stringify(readyInfo(opts.url, first))).toContain(secret);
  });

  it("makes a credentials file that others can read private again on a later start", async () => {
    const { transport } = fakeAuthSessions();
    const credentialsFile = join(dataDir(), "sandbox-credentials.json");
    await ensureSandboxPlatform({ transport, credentialsFile });
    chmodSync(credentialsFile, 0o644);
    await ensureSandboxPlatform({ transport, credentialsFile });
    expect(statSync(credentialsFile).mode & 0o777).toBe(0o600);
  });

  it("never prints fixed credentials given in CORRIDOR_BOOTSTRAP_CLIENT_SECRET, not even on the start that creates the platform", async () => {
    const { transport } = fakeAuthSessions();
    const credentialsFile = join(dataDir(), "sandbox-credentials.json");
    const fixed = { clientId: "cli_fixed", clientSecret: "a-fixed-secret-of-the-operator" };
    const first = await ensureSandboxPlatform({ transport, credentialsFile, ...fixed });
    const second = await ensureSandboxPlatform({ transport, credentialsFile, ...fixed });
    expect([first.createdNow, second.createdNow]).toEqual([true, false]);
    for (const creds of [first, second]) {
      const text = banner({ ...opts, creds });
      expect(text).not.toContain(fixed.clientSecret);
      expect(text).toContain("cli_fixed");
      expect(text).toContain("CORRIDOR_BOOTSTRAP_CLIENT_SECRET");
      expect(JSON.stringify(readyInfo(opts.url, creds))).not.toContain(fixed.clientSecret);
    }
  });
});
