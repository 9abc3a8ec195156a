// Where the payment files from outside live (real banks' files and the official ISO 20022 schemas):
// ../shared/fixtures beside the project root (as in CI), or beside the folder that holds the
// checkout (a git worktree under wt/), or CORRIDOR_FIXTURES for a clone elsewhere. Never edited by
// tests. Both rail connectors' suites read them through here.
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

export const paymentFixturesDir: string = (() => {
  for (const candidate of [process.env.CORRIDOR_FIXTURES, join(root, "../shared/fixtures"), join(root, "../../shared/fixtures")]) {
    if (candidate && existsSync(join(candidate, "ach")) && existsSync(join(candidate, "iso20022"))) return candidate;
  }
  throw new Error(`payment fixtures not found: expected ../shared/fixtures beside ${root} (or set CORRIDOR_FIXTURES to the folder holding ach/ and iso20022/)`);
})();
