import { join, resolve } from "node:path";
import type { TestProject } from "vitest/node";
import { build } from "../../scripts/build.mjs";
import { setupSplit } from "./split-setup.js";

const root = resolve(import.meta.dirname, "../..");

/**
 * The compiled app a replicated split system runs, in a folder of the suite's own under
 * node_modules/.cache (`name` keeps two suites apart): built when the tree changed since the last
 * run, otherwise reused as it is (scripts/build.mjs skips an up-to-date output). Fifteen processes
 * starting at once from compiled JavaScript take a fraction of what they take under tsx.
 */
export async function replicaDist(name: string): Promise<Record<string, string>> {
  const out = join(root, "node_modules", ".cache", `corridor-${name}-dist`);
  await build({ out, log: () => {} });
  return { CORRIDOR_SPLIT_RUNTIME: "dist", CORRIDOR_SPLIT_DIST_DIR: out };
}

/**
 * Global setup of the e2e-replicas project: the split system with two processes of every service
 * (`start:split --replicas 2`), their consumers sharing each topic's partitions, for the money-path
 * and webhook suites (issue 28). Same settings as e2e-split otherwise.
 */
export default async function setup(project: TestProject) {
  return setupSplit(project, { CORRIDOR_SPLIT_REPLICAS: "2", ...(await replicaDist("e2e-replicas")) });
}
