import { fileURLToPath } from "node:url";
import type { ServiceModule } from "@corridor/kit";

/**
 * agents: will own agents, their policies and usage counters, device codes, access tokens, agent
 * actions and approvals. A shell for now: it registers no RPCs of its own (the host adds
 * grpc.health.v1), consumes nothing and runs no workers; its functional RPCs come with later
 * issues.
 */
export const service: ServiceModule = {
  name: "agents",
  schema: "agents",
  migrationsDir: fileURLToPath(new URL("../migrations", import.meta.url)),
  build: () => ({
    routes: () => {},
    consumers: [],
    workers: [],
  }),
};
