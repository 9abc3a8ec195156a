import type { TestProject } from "vitest/node";
import { splitDist } from "./split-dist.js";
import { setupSplit } from "./split-setup.js";

/**
 * Global setup of the e2e-replicas project: the split system with two processes of every service
 * (`start:split --replicas 2`), their consumers sharing each topic's partitions, for the money-path
 * and webhook suites (issue 28). Same settings as e2e-split otherwise.
 */
export default async function setup(project: TestProject) {
  return setupSplit(project, { CORRIDOR_SPLIT_REPLICAS: "2", ...(await splitDist("e2e-split")) });
}
