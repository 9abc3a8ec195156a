import { execFile } from "node:child_process";
import { resolve } from "node:path";
import { createLogger } from "@corridor/kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmbedded, type EmbeddedSystem } from "../src/system.js";

// The operator binds a production platform's rails with the CLI (scripts/admin.ts `rail …`),
// against an embedded deployment's internal port, as docs/connectors.md says.

const root = resolve(import.meta.dirname, "../..");

function admin(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      ["--import", "tsx", resolve(root, "scripts/admin.ts"), ...args],
      { cwd: root, env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env }, timeout: 60_000 },
      (err, stdout, stderr) => done({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

describe("operator CLI: rail bindings", () => {
  let system: EmbeddedSystem;
  let env: Record<string, string>;
  beforeAll(async () => {
    system = await startEmbedded({ log: createLogger("admin-cli-rails", "silent"), httpHost: "127.0.0.1", httpPort: 0, internalPort: 0 });
    env = { CORRIDOR_INTERNAL_PORT: new URL(system.internalUrl!).port };
  });
  afterAll(async () => system?.stop());

  it("binds, lists and unbinds a production platform's rail, and refuses a sandbox platform (exit 1, nothing bound)", async () => {
    const prod = JSON.parse((await admin(["platform", "create", "--name", "Prod", "--environment", "PRODUCTION", "--json"], env)).stdout).platform.id;
    const sandbox = JSON.parse((await admin(["platform", "create", "--name", "Sandbox", "--environment", "SANDBOX", "--json"], env)).stdout).platform.id;

    const bound = await admin(["rail", "bind", "--platform", prod, "--currency", "usd", "--rail", "ach", "--connector", "ach-nacha", "--json"], env);
    expect(bound.code, bound.stderr).toBe(0);
    expect(JSON.parse(bound.stdout)).toMatchObject({ platformId: prod, currency: "USD", paymentRail: "ACH", connector: "ach-nacha", source: "OPERATOR" });

    const refused = await admin(["rail", "bind", "--platform", sandbox, "--currency", "USD", "--rail", "ACH", "--connector", "ach-nacha"], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/INVALID_INPUT[\s\S]*platformId: is a sandbox platform/);

    const listed = JSON.parse((await admin(["rail", "list", "--json"], env)).stdout);
    expect(listed.map((b: { platformId: string; connector: string }) => [b.platformId, b.connector])).toEqual([[prod, "ach-nacha"]]);

    const unbound = await admin(["rail", "unbind", "--platform", prod, "--currency", "USD", "--rail", "ACH"], env);
    expect(unbound.stdout).toContain(`Unbound ${prod} USD ACH`);
    // Each CLI run is a process of its own (tsx): a few seconds each on a busy machine.
  }, 120_000);

  it("refuses (exit 2) an incomplete rail command before calling anything", async () => {
    const res = await admin(["rail", "bind", "--platform", "Platform:x", "--currency", "USD", "--rail", "ACH"], env);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain("rail bind needs --connector <name>");
  });
});
