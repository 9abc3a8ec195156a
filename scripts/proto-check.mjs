#!/usr/bin/env node
// Freshness gate for generated code: regenerates proto/ into a temporary folder and fails when
// the result differs from the committed packages/proto/src/gen.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const out = mkdtempSync(join(tmpdir(), "corridor-proto-"));
const committed = join(root, "packages/proto/src/gen");

function files(dir) {
  const found = [];
  const walk = (d) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else found.push(relative(dir, p));
    }
  };
  walk(dir);
  return found.sort();
}

try {
  // buf gives a plugin 2 minutes by default; on a loaded CI machine the 40 files' generation once
  // took longer and failed the run before any test. A hung plugin still fails, after 15 minutes.
  execFileSync(join(root, "node_modules/.bin/buf"), ["generate", "--timeout", "15m", "--output", out], { cwd: root, stdio: "inherit" });
  const fresh = join(out, "packages/proto/src/gen");
  const a = files(committed);
  const b = files(fresh);
  const stale = [
    ...a.filter((f) => !b.includes(f)).map((f) => `${f} (should not exist)`),
    ...b.filter((f) => !a.includes(f)).map((f) => `${f} (missing)`),
    ...b.filter((f) => a.includes(f) && !readFileSync(join(committed, f)).equals(readFileSync(join(fresh, f)))).map((f) => `${f} (differs)`),
  ];
  if (stale.length > 0) {
    console.error("generated code is stale; run `pnpm proto:gen` and commit:\n  " + stale.join("\n  "));
    process.exit(1);
  }
  console.log(`proto: ${b.length} generated files are fresh`);
} finally {
  rmSync(out, { recursive: true, force: true });
}
