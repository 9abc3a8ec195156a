import { createOutcomePublisher, defineConnector, type OutcomePublisher } from "@corridor/connector";
import type { Clock, Kysely, Logger, PollingWorker } from "@corridor/kit";
import { fileURLToPath } from "node:url";
import { sandboxConfigSchema, type SandboxConfig } from "./config.js";
import { createStore } from "./data/store.js";
import type { SandboxDatabase } from "./data/tables.js";
import { createSimulator, type Simulator } from "./domain/simulator.js";
import { scheduleWorker } from "./workers/schedule.js";

export const SCHEMA = "sandbox";
export const MIGRATIONS_DIR = fileURLToPath(new URL("../migrations", import.meta.url));

/**
 * The simulator on the rail-connector package: its outcomes go out through the package's
 * publisher (connector_outcomes + the sandbox outbox), its schedule worker fires the delayed ones.
 * The sandbox service (server.ts) and the contract suite (test/contract.test.ts) both build it so.
 */
export function buildSimulator(deps: { db: Kysely<SandboxDatabase>; clock: Clock; log: Logger; config: SandboxConfig; outcomes?: OutcomePublisher }): {
  simulator: Simulator;
  schedule: PollingWorker;
} {
  const outcomes = deps.outcomes ?? createOutcomePublisher({ connector: "sandbox", clock: deps.clock });
  // The store wakes the worker once an action it scheduled has committed (the worker exists by then).
  const simulator = createSimulator({ store: createStore(deps.db, outcomes, { onScheduled: () => schedule.wake() }), clock: deps.clock });
  const schedule = scheduleWorker(simulator, { pollMs: deps.config.SANDBOX_SCHEDULE_POLL_MS, idlePollMs: deps.config.SANDBOX_SCHEDULE_IDLE_POLL_MS, log: deps.log });
  return { simulator, schedule };
}

/**
 * The sandbox simulator as a rail connector (docs/connectors.md): named `sandbox`, environment
 * SANDBOX, instructions on corridor.rails.v1. The sandbox service hosts it with its clock API; the
 * definition is what the contract suite runs.
 */
export const sandboxConnector = defineConnector({
  name: "sandbox",
  schema: SCHEMA,
  migrationsDir: MIGRATIONS_DIR,
  config: sandboxConfigSchema,
  // Schedules and outcome events of the sandbox's own schema: batches are safe.
  batch: true,
  build(ctx) {
    const { simulator, schedule } = buildSimulator({ db: ctx.db, clock: ctx.clock, log: ctx.log, config: ctx.config, outcomes: ctx.outcomes });
    return { onInstruction: (i, trx) => simulator.onInstruction(trx, i), workers: [schedule] };
  },
});
