import { fileURLToPath } from "node:url";
import type { BuiltService, Logger, ServiceDeps, ServiceModule } from "@corridor/kit";
import { AgentsService } from "@corridor/proto/corridor/agents/v1/agents_service_pb.js";
import { customerDirectory } from "./clients/customers.js";
import { ledgerClients } from "./clients/ledger.js";
import { platformEnvironment, sandboxClock } from "./clients/platforms.js";
import { quotesClients } from "./clients/quotes.js";
import { loadAgentsConfig } from "./config.js";
import { idempotencyKeys } from "./data/idempotency.js";
import { createStore } from "./data/store.js";
import type { AgentsDatabase } from "./data/tables.js";
import { createActions } from "./domain/actions.js";
import { createAgents } from "./domain/agents.js";
import { createExecutor } from "./domain/execution.js";
import { createExpiry, type Expiry } from "./domain/expiry.js";
import { createHydrator } from "./domain/hydration.js";
import { idempotencyRunner } from "./domain/idempotency.js";
import { createLedgerOutcomes } from "./domain/ledger-outcomes.js";
import { platformTime } from "./domain/platform-time.js";
import type { AccountDirectory, CustomerDirectory, LedgerPort, PlatformTime, QuotesPort, RatesPort } from "./domain/ports.js";
import { createRecovery, type Recovery } from "./domain/recovery.js";
import { writeActionEvent } from "./events/agent-events.js";
import { ledgerOutcomesConsumer } from "./events/ledger-consumer.js";
import { createAgentsHandler } from "./handlers/agents-handler.js";
import { expiryWorker } from "./workers/expiry.js";
import { recoveryWorker } from "./workers/recovery.js";

export const SCHEMA = "agents";

/** The other services agents asks, behind the domain's ports (src/clients/ in a host; fakes in tests). */
export interface AgentsPorts {
  customers: CustomerDirectory;
  accounts: AccountDirectory;
  ledger: LedgerPort;
  quotes: QuotesPort;
  rates: RatesPort;
  time: PlatformTime;
}

/** The built service plus its background passes, so tests can run a pass instead of waiting for a poll. */
export type BuiltAgents = BuiltService & { expiry: Expiry; recovery: Recovery };

/**
 * agents: agents, policies and usage, device codes and access tokens, agent actions and approvals
 * (docs/agents.md). Serves AgentsService; calls customers-kyc, auth-sessions, the sandbox clock,
 * the ledger and quotes-fx (never inside a transaction); produces corridor.agents.approvals.v1 and .actions.v1; consumes
 * the ledger's agent transactions; runs the execution-recovery and pending-expiry workers.
 */
export const service: ServiceModule = {
  name: "agents",
  schema: SCHEMA,
  migrationsDir: fileURLToPath(new URL("../migrations", import.meta.url)),
  build(deps) {
    const { accounts, ledger } = ledgerClients(() => deps.transportFor("ledger"));
    const { quotes, rates } = quotesClients(() => deps.transportFor("quotes-fx"));
    return buildAgents({
      ...deps,
      customers: customerDirectory(() => deps.transportFor("customers-kyc")),
      accounts,
      ledger,
      quotes,
      rates,
      time: platformTime({
        clock: deps.clock,
        environment: platformEnvironment(() => deps.transportFor("auth-sessions")),
        sandboxNow: sandboxClock(() => deps.transportFor("sandbox")),
      }),
    });
  },
};

/** The service from its deps; tests pass in-memory ports and a ManualClock. */
export function buildAgents(deps: Pick<ServiceDeps, "db" | "clock" | "env"> & AgentsPorts & { log?: Pick<Logger, "warn" | "info"> }): BuiltAgents {
  const config = loadAgentsConfig(deps.env);
  const log = deps.log ?? { warn: () => {}, info: () => {} };
  const db = deps.db.forSchema<AgentsDatabase>(SCHEMA);
  const store = createStore(db, writeActionEvent);
  const { clock, time, quotes, ledger } = deps;
  const hydrator = createHydrator({ quotes, ledger, log });
  const executor = createExecutor({ store, quotes, ledger, clock, log });
  const agents = createAgents({ store, clock, time, customers: deps.customers, accounts: deps.accounts, quotes, hydrator, deviceCodeTtlMs: config.AGENTS_DEVICE_CODE_TTL_SECONDS * 1000 });
  const actions = createActions({
    store,
    clock,
    time,
    accounts: deps.accounts,
    quotes,
    rates: deps.rates,
    executor,
    hydrator,
    idempotent: idempotencyRunner(idempotencyKeys(db), clock),
  });
  const expiry = createExpiry({ store, time, clock, hydrator, log });
  const recovery = createRecovery({ store, executor, clock, log, staleMs: config.AGENTS_STALE_EXECUTION_MS, outcomeRetentionMs: config.AGENTS_OUTCOME_RETENTION_HOURS * 3_600_000 });
  const worker = { batchSize: config.AGENTS_WORKER_BATCH_SIZE, log };
  return {
    // No per-service router options: they would replace the host's interceptors.
    routes: (router) => router.service(AgentsService, createAgentsHandler({ agents, actions })),
    consumers: [ledgerOutcomesConsumer(createLedgerOutcomes({ store, clock }))],
    workers: [recoveryWorker(recovery, { ...worker, pollMs: config.AGENTS_RECOVERY_POLL_MS }), expiryWorker(expiry, { ...worker, pollMs: config.AGENTS_EXPIRY_POLL_MS })],
    expiry,
    recovery,
  };
}
