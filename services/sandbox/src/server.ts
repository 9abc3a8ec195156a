import { instructionConsumer } from "@corridor/connector";
import { topics, type BuiltService, type ConsumerDefinition, type ServiceDeps, type ServiceModule } from "@corridor/kit";
import { CardIssuanceRequestedSchema } from "@corridor/proto/corridor/ledger/v1/cards_pb.js";
import { provisionCard, SANDBOX_CARD_FORMS } from "./domain/card-issuer.js";
import { emitCardIssued } from "./events/card-events.js";
import { SandboxService } from "@corridor/proto/corridor/sandbox/v1/sandbox_service_pb.js";
import { loadSandboxConfig } from "./config.js";
import { MIGRATIONS_DIR, SCHEMA, buildSimulator } from "./connector.js";
import type { SandboxDatabase } from "./data/tables.js";
import { createSandboxHandler } from "./handlers/sandbox-handler.js";

export { SCHEMA };

/**
 * sandbox: the rail connector `sandbox` (the simulator of every sandbox platform's rails, on
 * @corridor/connector), its durable schedule and each platform's sandbox clock. Serves
 * SandboxService; consumes corridor.rails.v1 and corridor.cards.issuance.v1 (it is the sandbox's
 * card issuer); produces corridor.rail-outcomes.v1 and corridor.sandbox.v1.
 */
export const service: ServiceModule = {
  name: "sandbox",
  schema: SCHEMA,
  migrationsDir: MIGRATIONS_DIR,
  build: (deps) => buildSandbox(deps),
};

export function buildSandbox(deps: Pick<ServiceDeps, "db" | "clock" | "log" | "env">): BuiltService {
  const config = loadSandboxConfig(deps.env);
  const db = deps.db.forSchema<SandboxDatabase>(SCHEMA);
  const { simulator, schedule } = buildSimulator({ db, clock: deps.clock, log: deps.log, config });
  // The package's consumer: only instructions addressed to `sandbox` in SANDBOX, one per transaction.
  const instructions = instructionConsumer({
    connector: "sandbox",
    onInstruction: (i, trx) => simulator.onInstruction(trx, i),
    log: deps.log,
    clock: deps.clock,
    // Schedules and outcome events of the sandbox's own schema: batches are safe.
    batch: true,
  });

  // The sandbox card issuer: every SANDBOX card the ledger asks for is provisioned (domain/card-issuer.ts).
  const cardIssuer: ConsumerDefinition<typeof CardIssuanceRequestedSchema> = {
    name: "card-issuance",
    topic: topics.cardIssuance,
    schema: CardIssuanceRequestedSchema,
    eventId: (e) => e.eventId,
    relevant: (e) => e.environment === "SANDBOX" && SANDBOX_CARD_FORMS.has(e.form),
    async handle(e, trx) {
      if (e.environment !== "SANDBOX" || !SANDBOX_CARD_FORMS.has(e.form)) return;
      const at = deps.clock.now();
      await emitCardIssued(trx as never, { platformId: e.platformId, card: provisionCard(e.cardId, at), at });
    },
  };

  return {
    // No per-service router options: they would replace the host's interceptors.
    routes: (router) => router.service(SandboxService, createSandboxHandler({ simulator })),
    consumers: [instructions, cardIssuer],
    workers: [schedule],
  };
}

export { createSimulator, type Simulator } from "./domain/simulator.js";
export { sandboxConnector } from "./connector.js";
