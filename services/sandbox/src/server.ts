import { timestampDate } from "@bufbuild/protobuf/wkt";
import { fileURLToPath } from "node:url";
import { topics, type BuiltService, type ConsumerDefinition, type PollingWorker, type ServiceDeps, type ServiceModule } from "@corridor/kit";
import { RailInstructionSchema } from "@corridor/proto/corridor/ledger/v1/rails_pb.js";
import { SandboxService } from "@corridor/proto/corridor/sandbox/v1/sandbox_service_pb.js";
import { loadSandboxConfig } from "./config.js";
import { createStore } from "./data/store.js";
import type { SandboxDatabase } from "./data/tables.js";
import { createSimulator } from "./domain/simulator.js";
import { createSandboxHandler } from "./handlers/sandbox-handler.js";
import { scheduleWorker } from "./workers/schedule.js";

export const SCHEMA = "sandbox";

/**
 * sandbox: the rail connector shipped for every rail (suffix outcomes), its durable schedule and
 * each platform's sandbox clock. Serves SandboxService; consumes corridor.rails.v1; produces
 * corridor.rail-outcomes.v1.
 */
export const service: ServiceModule = {
  name: "sandbox",
  schema: SCHEMA,
  migrationsDir: fileURLToPath(new URL("../migrations", import.meta.url)),
  build: (deps) => buildSandbox(deps),
};

export function buildSandbox(deps: Pick<ServiceDeps, "db" | "clock" | "log" | "env">): BuiltService {
  const config = loadSandboxConfig(deps.env);
  const db = deps.db.forSchema<SandboxDatabase>(SCHEMA);
  // The worker is built after the store that wakes it; the hook only runs once a commit happened.
  const simulator = createSimulator({ store: createStore(db, { onScheduled: () => schedule.wake() }), clock: deps.clock });
  const schedule: PollingWorker = scheduleWorker(simulator, { pollMs: config.SANDBOX_SCHEDULE_POLL_MS, idlePollMs: config.SANDBOX_SCHEDULE_IDLE_POLL_MS, log: deps.log });

  const instructions: ConsumerDefinition<typeof RailInstructionSchema> = {
    name: "rail-instructions",
    // Schedules and outcome events of the sandbox's own schema: batches are safe.
    batch: true,
    topic: topics.rails,
    schema: RailInstructionSchema,
    eventId: (e) => e.eventId,
    handle: (e, trx) =>
      simulator.onInstruction(trx, {
        platformId: e.platformId,
        transactionId: e.transactionId,
        kind: e.kind,
        umaAddress: e.umaAddress,
        accountInfo: e.accountInfo as Record<string, unknown> | undefined,
        occurredAt: e.occurredAt ? timestampDate(e.occurredAt) : undefined,
      }),
  };

  return {
    // No per-service router options: they would replace the host's interceptors.
    routes: (router) => router.service(SandboxService, createSandboxHandler({ simulator })),
    consumers: [instructions],
    workers: [schedule],
  };
}

export { createSimulator, type Simulator } from "./domain/simulator.js";
