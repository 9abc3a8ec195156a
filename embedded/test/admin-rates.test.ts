import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { createLogger } from "@corridor/kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmbedded, type EmbeddedSystem } from "../src/system.js";

// The operator's production rates through the admin CLI (issue 25, item 3): `rates push` and
// `rates list` against a running embedded system's internal port, and a production platform's
// GET /exchange-rates priced from what was pushed.

const run = promisify(execFile);
const root = join(import.meta.dirname, "../..");
const admin = (port: number, ...args: string[]) =>
  run(process.execPath, ["--import", "tsx", join(root, "scripts/admin.ts"), ...args], { cwd: root, env: { ...process.env, CORRIDOR_INTERNAL_PORT: String(port), CORRIDOR_AUTH_SESSIONS_URL: "", CORRIDOR_QUOTES_FX_URL: "" } });

describe("npm run admin -- rates", () => {
  let system: EmbeddedSystem;
  let port = 0;
  beforeAll(async () => {
    port = 20_000 + Math.floor(Math.random() * 20_000);
    system = await startEmbedded({ log: createLogger("admin-rates", "silent"), httpHost: "127.0.0.1", httpPort: 0, internalPort: port });
  }, 120_000);
  afterAll(async () => system?.stop());

  it("pushes rates into the production table, lists them with their source and freshness, and refuses a bad rate (exit 1) or a malformed one (exit 2)", async () => {
    const pushed = await admin(port, "rates", "push", "--base", "EUR", "--rate", "USD=1.2500", "--rate", "gbp=0.8", "--json");
    const out = JSON.parse(pushed.stdout);
    expect(out.changed).toBe(2);
    expect(out.rates).toEqual([
      { currency: "EUR", usdValue: "1.25", source: "operator", asOf: expect.any(String), fresh: true },
      { currency: "GBP", usdValue: "1.5625", source: "operator", asOf: expect.any(String), fresh: true },
    ]);
    const listed = JSON.parse((await admin(port, "rates", "list", "--json")).stdout);
    expect(listed.map((r: { currency: string }) => r.currency)).toEqual(["EUR", "GBP"]);

    const refused = await admin(port, "rates", "push", "--base", "EUR", "--rate", "USD=0").then(
      () => undefined,
      (err: { code: number; stderr: string }) => err,
    );
    expect(refused?.code).toBe(1);
    expect(refused?.stderr).toMatch(/rates/);
    const usage = await admin(port, "rates", "push", "--base", "EUR", "--rate", "USD=abc").catch((err: { code: number; stderr: string }) => err);
    expect((usage as { code: number }).code).toBe(2);
  }, 60_000);
});
