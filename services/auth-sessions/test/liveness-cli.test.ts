import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createClient, createRouterTransport } from "@connectrpc/connect";
import { ManualClock, appErrorInterceptor, errors, serveConnect, type ConnectServer } from "@corridor/kit";
import { openServiceTestDatabase } from "@corridor/kit/testing";
import { Environment } from "@corridor/proto/corridor/auth_sessions/v1/platform_pb.js";
import { PlatformAdminService } from "@corridor/proto/corridor/auth_sessions/v1/platform_admin_service_pb.js";
import { LivenessService } from "@corridor/proto/corridor/auth_sessions/v1/liveness_service_pb.js";
import { ScaService } from "@corridor/proto/corridor/auth_sessions/v1/sca_service_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ScaCustomer } from "../src/domain/sca/ports.js";
import { buildAuthSessions, service } from "../src/server.js";

// `npm run admin -- liveness ...` (the operator's liveness review of SCA factor resets, docs/sca.md)
// against auth-sessions served on a real h2c port, as split mode serves it.

const root = resolve(import.meta.dirname, "../../..");
const customers = new Map<string, ScaCustomer & { platformId: string }>();
let server: ConnectServer;
let url: string;
let drop: () => Promise<void>;
let sca: ReturnType<typeof createClient<typeof ScaService>>;
let page: ReturnType<typeof createClient<typeof LivenessService>>;
let admin: ReturnType<typeof createClient<typeof PlatformAdminService>>;

beforeAll(async () => {
  const opened = await openServiceTestDatabase(service);
  drop = opened.drop;
  const directory = {
    async get(platformId: string, customerId: string) {
      const c = customers.get(customerId);
      if (!c || c.platformId !== platformId) throw errors.notFound("Customer", customerId);
      return c;
    },
  };
  const built = buildAuthSessions({ db: opened.db, clock: new ManualClock("2026-01-01T12:00:00.000Z"), customers: directory });
  server = await serveConnect({ routes: built.routes, interceptors: [appErrorInterceptor], port: 0, host: "127.0.0.1" });
  url = `http://127.0.0.1:${server.port}`;
  const transport = createRouterTransport(built.routes, { router: { interceptors: [appErrorInterceptor] } });
  sca = createClient(ScaService, transport);
  page = createClient(LivenessService, transport);
  admin = createClient(PlatformAdminService, transport);
});
afterAll(async () => {
  await server?.close();
  await drop?.();
});

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("CORRIDOR_")));
  return new Promise((done) => {
    execFile(process.execPath, ["--import", "tsx", resolve(root, "scripts/admin.ts"), ...args], { cwd: root, env: clean, timeout: 60_000 }, (err, stdout, stderr) =>
      done({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(40, 3)]);

describe("admin CLI liveness commands", () => {
  it("lists, shows, exports and decides a production customer's selfie; the reset follows the decision", async () => {
    const { platform } = await admin.createPlatform({ name: "liveness CLI", environment: Environment.PRODUCTION, isRegulatedFinancialInstitution: false });
    const platformId = platform!.id;
    const customerId = `Customer:${randomUUID()}`;
    customers.set(customerId, { id: customerId, platformId, country: "FR", email: "c@example.com" });
    const reset = await sca.startFactorReset({ platformId, customerId, factor: "SMS_OTP" });
    await page.submitLivenessSelfie({ token: reset.livenessAccessToken, contentType: "image/jpeg", content: JPEG });

    const list = await cli(["liveness", "list", "--status", "SUBMITTED", "--platform", platformId, "--json", "--url", url]);
    expect(list.code, list.stderr).toBe(0);
    const [check] = JSON.parse(list.stdout) as { id: string; customerId: string; resetId: string; status: string }[];
    expect(check).toMatchObject({ customerId, resetId: reset.resetId, status: "SUBMITTED" });
    // The token is nowhere in what the operator sees.
    expect(list.stdout).not.toContain(reset.livenessAccessToken);

    const show = await cli(["liveness", "show", check!.id, "--url", url]);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toContain(`${JPEG.length} bytes`);
    expect(show.stdout).toContain(`kyc list --platform ${platformId} --customer ${customerId}`);

    const out = join(mkdtempSync(join(tmpdir(), "liveness-cli-")), "selfie.jpg");
    const exported = await cli(["liveness", "export", check!.id, "--out", out, "--url", url]);
    expect(exported.code, exported.stderr).toBe(0);
    expect(readFileSync(out).equals(JPEG)).toBe(true);

    expect((await cli(["liveness", "reject", check!.id, "--url", url])).code).toBe(2);
    const approved = await cli(["liveness", "approve", check!.id, "--url", url]);
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout).toContain("is now APPROVED");
    expect((await sca.getFactorReset({ platformId, customerId, resetId: reset.resetId })).status).toBe("LIVENESS_PASSED");
    const again = await cli(["liveness", "reject", check!.id, "--reason", "no", "--url", url]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("INVALID_STATE_TRANSITION");
  }, 180_000);
});
