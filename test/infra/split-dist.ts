import { join, resolve } from "node:path";
import { build } from "../../scripts/build.mjs";

const root = resolve(import.meta.dirname, "../..");

/**
 * The compiled app a split system in the tests runs, in a folder under node_modules/.cache (`name`
 * keeps apart suites that may build at the same time): built when the tree changed since the last
 * run, otherwise reused as it is (scripts/build.mjs skips an up-to-date output). Processes started
 * from compiled JavaScript take a fraction of the CPU they take under tsx, which compiles every
 * module again in each process: eight of them under tsx once missed the launcher's 4-minute
 * start-up bound on a loaded CI machine, which ended the whole run with no test run.
 */
export async function splitDist(name: string): Promise<Record<string, string>> {
  const out = join(root, "node_modules", ".cache", `corridor-${name}-dist`);
  await build({ out, log: () => {} });
  return { CORRIDOR_SPLIT_RUNTIME: "dist", CORRIDOR_SPLIT_DIST_DIR: out };
}
