import { mkdirSync, mkdtempSync, rmSync, unlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MANIFEST, staleReason, writeManifest } from "../../scripts/build.mjs";

// `npm start` builds first (issue 28 item 4): scripts/build.mjs skips the build when the output's
// manifest says it was made from the tree as it is, and must never skip one that is not.
describe("build manifest: an unchanged tree is not rebuilt, a changed one is", () => {
  let repo: string;
  let out: string;
  const write = (rel: string, text: string) => {
    mkdirSync(join(repo, rel, ".."), { recursive: true });
    writeFileSync(join(repo, rel), text);
  };

  beforeEach(() => {
    repo = mkdtempSync(join(tmpdir(), "build-manifest-repo-"));
    out = mkdtempSync(join(tmpdir(), "build-manifest-out-"));
    write("services/ledger/src/main.ts", "import './server.js';\n");
    write("services/ledger/src/server.ts", "export const x = 1;\n");
    write("services/ledger/migrations/0001_init.ts", "export async function up() {}\n");
    write("packages/kit/src/index.ts", "export {};\n");
    write("scripts/build.mjs", "// the build\n");
    write("pnpm-lock.yaml", "lockfileVersion: '9.0'\n");
    // The outputs a usable build has.
    for (const f of ["app/corridor.mjs", "app/deployables.json", "app/pglite-template.tar.gz"]) {
      mkdirSync(join(out, "app"), { recursive: true });
      writeFileSync(join(out, f), "x");
    }
    writeManifest(out, repo, ["services/ledger/src/main.ts", "services/ledger/src/server.ts", "services/ledger/migrations/0001_init.ts", "packages/kit/src/index.ts"]);
  });
  afterEach(() => {
    rmSync(repo, { recursive: true, force: true });
    rmSync(out, { recursive: true, force: true });
  });

  it("unchanged: up to date, also when a file was only touched", () => {
    expect(staleReason(out, repo)).toBe("");
    const later = new Date(Date.now() + 60_000);
    utimesSync(join(repo, "services/ledger/src/server.ts"), later, later);
    expect(staleReason(out, repo)).toBe("");
  });

  it("an edited source file, even of the same size and with its old mtime back, rebuilds", () => {
    write("services/ledger/src/server.ts", "export const x = 2;\n");
    expect(staleReason(out, repo)).toBe("services/ledger/src/server.ts changed");
    const later = new Date(Date.now() + 60_000);
    utimesSync(join(repo, "services/ledger/src/server.ts"), later, later);
    expect(staleReason(out, repo)).toBe("services/ledger/src/server.ts changed");
  });

  it("the build script, the lockfile, a new or removed file, a new migration or service, a missing output: rebuilds", () => {
    write("scripts/build.mjs", "// the build, changed\n");
    expect(staleReason(out, repo)).toBe("scripts/build.mjs changed");
    write("scripts/build.mjs", "// the build\n");
    expect(staleReason(out, repo)).toBe("");

    write("pnpm-lock.yaml", "lockfileVersion: '9.1'\n");
    expect(staleReason(out, repo)).toBe("pnpm-lock.yaml changed");
    write("pnpm-lock.yaml", "lockfileVersion: '9.0'\n");

    write("services/ledger/src/server/index.ts", "export const y = 1;\n");
    expect(staleReason(out, repo)).toMatch(/files added or removed in services\/ledger\/src/);
    rmSync(join(repo, "services/ledger/src/server"), { recursive: true });
    expect(staleReason(out, repo)).toBe("");

    write("services/ledger/migrations/0002_more.ts", "export async function up() {}\n");
    expect(staleReason(out, repo)).toMatch(/files added or removed in services\/ledger\/migrations/);
    unlinkSync(join(repo, "services/ledger/migrations/0002_more.ts"));

    write("services/fx/src/main.ts", "export {};\n");
    expect(staleReason(out, repo)).toBe("files added or removed in services");
    rmSync(join(repo, "services/fx"), { recursive: true });
    expect(staleReason(out, repo)).toBe("");

    unlinkSync(join(repo, "packages/kit/src/index.ts"));
    expect(staleReason(out, repo)).toBe("packages/kit/src/index.ts was removed");
    write("packages/kit/src/index.ts", "export {};\n");

    unlinkSync(join(out, "app/pglite-template.tar.gz"));
    expect(staleReason(out, repo)).toBe("app/pglite-template.tar.gz is missing");
  });

  it("no manifest (a first or interrupted build): builds", () => {
    unlinkSync(join(out, MANIFEST));
    expect(staleReason(out, repo)).toBe("no previous build");
  });
});
