import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { describeViolation, houseRuleViolations, repoRoot } from "./cruise.js";
import { describeSourceViolation, sourceRuleViolations } from "./source-rules.js";

// The house rules (STYLE.md 1–3, docs/architecture.md): dependency-cruiser for imports
// (.dependency-cruiser.cjs), the TypeScript syntax tree for process.env and router options.

/** A throwaway tree of files (path → content) with the repository's layout. */
function plantTree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "corridor-rules-"));
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  planted.push(dir);
  return dir;
}
const planted: string[] = [];
afterAll(() => planted.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe("the house rules", () => {
  it("hold on the repository: no cross-service imports, pure domains, handlers without data, no cycles", async () => {
    const violations = await houseRuleViolations();
    expect(violations.map(describeViolation)).toEqual([]);
  }, 120_000);

  it("hold on the repository: process.env only in config.ts and composition roots, no per-service router options", () => {
    expect(sourceRuleViolations(repoRoot).map(describeSourceViolation)).toEqual([]);
  });

  it("fail on planted import violations, each under its own rule, and pass the clean files", async () => {
    const dir = plantTree({
      "node_modules/kysely/package.json": JSON.stringify({ name: "kysely", main: "index.js" }),
      "node_modules/kysely/index.js": "export {};\n",
      "node_modules/@connectrpc/connect/package.json": JSON.stringify({ name: "@connectrpc/connect", main: "index.js" }),
      "node_modules/@connectrpc/connect/index.js": "export {};\n",
      "packages/proto/src/gen/thing_pb.ts": "export type Thing = { id: string };\n",
      "packages/kit/src/host/index.ts": "export const host = 1;\n",
      "packages/kit/src/index.ts": "export const kit = 1;\n",
      "services/b/src/server.ts": "export const b = 1;\n",
      "services/a/src/server.ts": 'import { b } from "../../b/src/server";\nexport const a = b;\n',
      "services/a/src/data/repo.ts": "export const repo = 1;\n",
      "services/a/src/domain/sql.ts": 'import type { Kysely } from "kysely";\nexport type Db = Kysely;\n',
      "services/a/src/domain/proto.ts": 'import type { Thing } from "../../../../packages/proto/src/gen/thing_pb";\nexport type T = Thing;\n',
      "services/a/src/domain/transport.ts": 'import "@connectrpc/connect";\nimport { host } from "../../../../packages/kit/src/host/index";\nexport const t = host;\n',
      "services/a/src/domain/outward.ts": 'import { repo } from "../data/repo";\nexport const o = repo;\n',
      "services/a/src/domain/c1.ts": 'import { c2 } from "./c2";\nexport const c1 = () => c2();\n',
      "services/a/src/domain/c2.ts": 'import { c1 } from "./c1";\nexport const c2 = () => c1();\n',
      "services/a/src/handlers/handler.ts": 'import { repo } from "../data/repo";\nexport const h = repo;\n',
      "services/a/src/domain/clean.ts": 'import { kit } from "../../../../packages/kit/src/index";\nexport const clean = kit;\n',
      "gateway/src/app.ts": 'import { a } from "../../services/a/src/server";\nexport const app = a;\n',
    });
    const found = (await houseRuleViolations(dir, ["services", "gateway/src", "packages/kit/src"])).map((v) => `${v.rule.name} ${v.from}`);
    // A cycle is reported once, from whichever of its modules is met first.
    const normalized = found.map((f) => f.replace(/^no-circular services\/a\/src\/domain\/c[12]\.ts$/, "no-circular c1 <-> c2"));
    expect(new Set(normalized)).toEqual(
      new Set([
        "no-cross-service services/a/src/server.ts",
        "no-service-from-gateway-or-kit gateway/src/app.ts",
        "domain-no-sql services/a/src/domain/sql.ts",
        "domain-no-proto services/a/src/domain/proto.ts",
        "domain-no-transport services/a/src/domain/transport.ts",
        "domain-points-inward services/a/src/domain/outward.ts",
        "handlers-no-data services/a/src/handlers/handler.ts",
        "no-circular c1 <-> c2",
      ]),
    );
  }, 60_000);

  it("fail on planted env reads and router options, and allow env in config.ts and main.ts", () => {
    const dir = plantTree({
      "services/a/src/config.ts": "export const port = process.env.PORT;\n",
      "services/a/src/main.ts": 'export const env = process["env"];\n',
      "services/a/src/domain/read.ts": "export const port = process.env.PORT;\n",
      "services/a/src/data/indexed.ts": 'export const env = globalThis.process["env"];\n',
      "services/a/src/handlers/destructured.ts": "const { env } = process;\nexport const e = env;\n",
      "services/a/src/server.ts": "export const routes = (router: any) => router.service(S, impl, { interceptors: [] });\nexport const ok = (router: any) => router.service(S, impl);\n",
    });
    const found = sourceRuleViolations(dir, ["services"]).map((v) => `${v.rule} ${v.file}:${v.line}`);
    expect(found.sort()).toEqual(
      [
        "env-only-in-config services/a/src/domain/read.ts:1",
        "env-only-in-config services/a/src/data/indexed.ts:1",
        "env-only-in-config services/a/src/handlers/destructured.ts:1",
        "no-per-service-router-options services/a/src/server.ts:1",
      ].sort(),
    );
  });
});
