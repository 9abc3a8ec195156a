import { execFile } from "node:child_process";
import { createServer } from "node:net";
import { resolve } from "node:path";
import { ManualClock, appErrorInterceptor, serveConnect, type ConnectServer } from "@corridor/kit";
import { openServiceTestDatabase } from "@corridor/kit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildAuthSessions, service } from "../src/server.js";

// The operator CLI (scripts/admin.ts) run as an operator runs it, against two deployments on this
// machine: it acts only on the one it is told to, says which one that is, and refuses when nothing
// answers.

const root = resolve(import.meta.dirname, "../../..");

interface Deployment {
  server: ConnectServer;
  url: string;
  close(): Promise<void>;
}

async function startDeployment(name: string): Promise<Deployment> {
  const { db, drop } = await openServiceTestDatabase(service);
  const built = buildAuthSessions({ db, clock: new ManualClock("2025-10-13T12:00:00.000Z"), env: { CORRIDOR_DEPLOYMENT_NAME: name } });
  const server = await serveConnect({ routes: built.routes, interceptors: [appErrorInterceptor], port: 0, host: "127.0.0.1" });
  return {
    server,
    url: `http://127.0.0.1:${server.port}`,
    async close() {
      await server.close();
      await drop();
    },
  };
}

/** Runs the CLI with only the environment given (plus PATH/HOME), never the test process's CORRIDOR_* settings. */
function admin(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      ["--import", "tsx", resolve(root, "scripts/admin.ts"), ...args],
      { cwd: root, env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env }, timeout: 60_000 },
      (err, stdout, stderr) => done({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

function freePort(): Promise<number> {
  return new Promise((ok) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => ok(port));
    });
  });
}

let a: Deployment;
let b: Deployment;
beforeAll(async () => {
  a = await startDeployment("deployment A");
  b = await startDeployment("deployment B");
});
afterAll(async () => {
  await a?.close();
  await b?.close();
});

describe("operator CLI target", () => {
  it("platform create --environment PRODUCTION prints the platform's UMA domain under the operator's (CORRIDOR_UMA_DOMAIN, default uma.localhost)", async () => {
    const res = await admin(["--url", a.url, "platform", "create", "--name", "Acme Bank", "--environment", "PRODUCTION", "--json"]);
    expect(res.code, res.stderr).toBe(0);
    const out = JSON.parse(res.stdout);
    expect(out.platform.environment).toBe("PRODUCTION");
    expect(out.umaDomain).toBe(`acme-bank-${out.platform.id.replace(/[^0-9a-f]/gi, "").slice(-8).toLowerCase()}.uma.localhost`);
    const text = await admin(["--url", a.url, "platform", "create", "--name", "Acme Bank", "--environment", "PRODUCTION"]);
    expect(text.stdout).toMatch(/UMA domain {4}acme-bank-[0-9a-f]{8}\.uma\.localhost/);
  });

  it("acts on the deployment CORRIDOR_INTERNAL_PORT names, and prints which deployment that is", async () => {
    const res = await admin(["platform", "create", "--name", "Acme", "--environment", "SANDBOX", "--json"], { CORRIDOR_INTERNAL_PORT: String(b.server.port) });
    expect(res.code, res.stderr).toBe(0);
    const out = JSON.parse(res.stdout);
    expect(out.deployment).toMatchObject({ name: "deployment B", url: b.url, target: "CORRIDOR_INTERNAL_PORT" });
    expect(out.deployment.deploymentId).toMatch(/^Deployment:/);
    expect(out.umaDomain).toMatch(/^acme-[0-9a-f]{8}\.sandbox\.uma\.money$/);
    expect(res.stderr).toContain(`Deployment ${out.deployment.deploymentId} "deployment B" at ${b.url}`);

    // The platform is on B, not on A.
    const onA = JSON.parse((await admin(["platform", "list", "--json"], { CORRIDOR_AUTH_SESSIONS_URL: a.url })).stdout);
    const onB = JSON.parse((await admin(["--url", b.url, "platform", "list", "--json"])).stdout);
    expect(onA.map((p: { id: string }) => p.id)).not.toContain(out.platform.id);
    expect(onB.map((p: { id: string }) => p.id)).toContain(out.platform.id);
  });

  it("tells the two deployments apart by their ids", async () => {
    const ra = await admin(["platform", "list"], { CORRIDOR_AUTH_SESSIONS_URL: a.url });
    const rb = await admin(["platform", "list"], { CORRIDOR_AUTH_SESSIONS_URL: b.url });
    const idOf = (stderr: string) => /Deployment (Deployment:\S+)/.exec(stderr)?.[1];
    expect(idOf(ra.stderr)).toBeDefined();
    expect(idOf(rb.stderr)).toBeDefined();
    expect(idOf(ra.stderr)).not.toBe(idOf(rb.stderr));
  });

  it("refuses (exit 2) without a target instead of trying a default port", async () => {
    const res = await admin(["platform", "list"]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain("say which deployment to act on");
    expect(res.stderr).not.toContain("Deployment:");
  });

  it("refuses (exit 2) when CORRIDOR_AUTH_SESSIONS_URL and CORRIDOR_INTERNAL_PORT name different deployments", async () => {
    const res = await admin(["platform", "create", "--name", "X", "--environment", "SANDBOX"], { CORRIDOR_AUTH_SESSIONS_URL: a.url, CORRIDOR_INTERNAL_PORT: String(b.server.port) });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain("two different targets");
  });

  it("refuses (exit 1) and does nothing when nothing answers at the target", async () => {
    const port = await freePort();
    const res = await admin(["platform", "create", "--name", "X", "--environment", "SANDBOX"], { CORRIDOR_INTERNAL_PORT: String(port) });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`no Corridor deployment answers at http://127.0.0.1:${port}`);
    expect(res.stdout).not.toContain("clientSecret");
  });
});
