// The built image against what deploys it: the Helm chart's image reference, user and container
// arguments, and what the image holds (compiled JavaScript and production packages only). The
// containers here get no network at all.
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { describe, expect, inject, it } from "vitest";
import { deployables } from "../../scripts/build.mjs";

const run = promisify(execFile);
const root = resolve(import.meta.dirname, "../..");
const image = inject("containerImage");
const reason = inject("containerSkipReason");
const required = inject("containerRequired");

async function docker(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run("docker", args, { maxBuffer: 16 * 1024 * 1024 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === "number" ? e.code : -1, stdout: e.stdout ?? "", stderr: e.stderr ?? "" };
  }
}

describe.skipIf(!image && !required)(`the built image${image ? ` (on ${image.base}, ${(image.sizeBytes / 1e6).toFixed(0)} MB)` : ` — skipped: ${reason}`}`, () => {
  const values = readFileSync(join(root, "helm/corridor/values.yaml"), "utf8");
  const chart = readFileSync(join(root, "helm/corridor/Chart.yaml"), "utf8");

  it("is the image the Helm chart deploys: its tag, its numeric non-root user, its ENTRYPOINT taking the chart's argument", async () => {
    if (!image) throw new Error(`the container suites must run here (CI): ${reason}`);
    const repository = /^image:\s*\n(?:\s+#.*\n|\s+\w+:.*\n)*?\s+repository:\s*(\S+)/m.exec(values)![1];
    const appVersion = /^appVersion:\s*"?([^"\s]+)"?/m.exec(chart)![1];
    expect(image.chartTag).toBe(`${repository}:${appVersion}`);
    const inspected = JSON.parse((await docker(["image", "inspect", image.chartTag])).stdout)[0];
    expect(inspected.Id).toBe(image.id);
    expect(inspected.Config.User).toBe("1000:1000");
    expect(/runAsUser:\s*(\d+)/.exec(values)![1]).toBe("1000");
    expect(inspected.Config.Entrypoint).toEqual(["node", "/app/corridor.mjs"]);
    expect(inspected.Config.Cmd ?? null).toBeNull();
  });

  it("knows every deployable the chart names, and refuses an unknown one with usage and exit 64", async () => {
    if (!image) throw new Error(`the container suites must run here (CI): ${reason}`);
    const res = await docker(["run", "--rm", "--network", "none", image.tag, "no-such-deployable"]);
    expect(res.code).toBe(64);
    expect(res.stderr).toContain("unknown deployable: no-such-deployable");
    for (const d of deployables()) expect(res.stderr).toContain(d.name);
    const admin = await docker(["run", "--rm", "--network", "none", image.tag, "admin", "--help"]);
    expect(admin.code, admin.stderr).toBe(0);
    expect(admin.stdout).toContain("platform create");
  });

  it("runs one rail connector as `connector <name>` (the chart's connector Deployments' args), refusing a bad config with every bad key and exit 78", async () => {
    if (!image) throw new Error(`the container suites must run here (CI): ${reason}`);
    const bad = await docker(["run", "--rm", "--network", "none", "-e", "ACH_ODFI_ROUTING=123456789", image.tag, "connector", "ach-nacha"]);
    expect(bad.code, bad.stderr).toBe(78);
    expect(bad.stderr).toContain("corridor connector ach-nacha: cannot start");
    for (const key of ["ACH_ODFI_ROUTING", "ACH_IMMEDIATE_ORIGIN", "ACH_SFTP_HOST", "ACH_SFTP_HOST_KEY"]) expect(bad.stderr).toContain(`  ${key}:`);
    const unknown = await docker(["run", "--rm", "--network", "none", image.tag, "connector", "swift"]);
    expect(unknown.code).toBe(64);
    expect(unknown.stderr).toContain("known: ach-nacha, sepa, sepa-iso20022");
  });

  it("holds compiled JavaScript and production packages only: no TypeScript sources, no tsx, no test tooling", async () => {
    if (!image) throw new Error(`the container suites must run here (CI): ${reason}`);
    const script = [
      "const fs = require('fs'), path = require('path');",
      "const ts = [];",
      "(function walk(d) { for (const e of fs.readdirSync(d, { withFileTypes: true })) {",
      "  const p = path.join(d, e.name);",
      "  if (e.isDirectory() && e.name !== 'node_modules') walk(p);",
      "  else if (/\\.ts$/.test(e.name) && !/\\.d\\.ts$/.test(e.name)) ts.push(p); } })('/app');",
      "console.log(JSON.stringify({ ts, modules: fs.readdirSync('/app/node_modules/.pnpm').filter((n) => n !== 'node_modules') }));",
    ].join("\n");
    const res = await docker(["run", "--rm", "--network", "none", "--entrypoint", "node", image.tag, "-e", script]);
    expect(res.code, res.stderr).toBe(0);
    const { ts, modules } = JSON.parse(res.stdout) as { ts: string[]; modules: string[] };
    expect(ts).toEqual([]);
    for (const dev of ["tsx@", "typescript@", "vitest@", "esbuild@", "testcontainers@", "@bufbuild+buf@"]) {
      expect(modules.filter((m) => m.startsWith(dev)), dev).toEqual([]);
    }
  });
});
