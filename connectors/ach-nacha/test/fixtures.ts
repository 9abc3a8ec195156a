// Where the payment files from outside live: ../shared/fixtures beside the project root (as in CI),
// or beside the folder that holds the checkout (a git worktree under wt/). Never edited by tests.
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");

export const fixturesDir: string = (() => {
  for (const candidate of [process.env.CORRIDOR_FIXTURES, join(root, "../shared/fixtures"), join(root, "../../shared/fixtures")]) {
    if (candidate && existsSync(join(candidate, "ach"))) return candidate;
  }
  throw new Error(`payment fixtures not found: expected ../shared/fixtures beside ${root} (or set CORRIDOR_FIXTURES)`);
})();

export const achFixture = (...parts: string[]): string => join(fixturesDir, "ach", ...parts);
