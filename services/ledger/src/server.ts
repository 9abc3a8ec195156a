import { fileURLToPath } from "node:url";
import { SANDBOX_CONNECTOR } from "@corridor/connector";
import { idempotencyKeyStore, observeRailBacklog, type BuiltService, type ServiceDeps, type ServiceModule } from "@corridor/kit";
import { LedgerAdminService } from "@corridor/proto/corridor/ledger/v1/ledger_admin_service_pb.js";
import { LedgerService } from "@corridor/proto/corridor/ledger/v1/ledger_service_pb.js";
import { CardsService } from "@corridor/proto/corridor/ledger/v1/cards_service_pb.js";
import { cardStore } from "./data/cards.js";
import { createCards } from "./domain/cards.js";
import * as cardEvents from "./events/card-events.js";
import { createCardsHandler } from "./handlers/cards-handler.js";
import { connectDirectory } from "./clients/directory.js";
import { connectWalletSignatures } from "./clients/wallet-signatures.js";
import { loadLedgerConfig } from "./config.js";
import { customerCopy, platformEnvironmentCopy } from "./data/copies.js";
import { railBacklogReader } from "./data/rail-backlog.js";
import { reconciliationStore } from "./data/reconciliation.js";
import { createStore } from "./data/store.js";
import type { LedgerDatabase } from "./data/tables.js";
import { dueQuoteTransactions } from "./data/transactions.js";
import { withEventCopies } from "./domain/facts.js";
import { idempotencyRunner } from "./domain/idempotency.js";
import { createLedger } from "./domain/ledger.js";
import type { Directory, WalletSignatures } from "./domain/ports.js";
import { quoteExpiryPass } from "./domain/quote-expiry.js";
import { createReconciliation } from "./domain/reconciliation.js";
import { createTrialBalance } from "./domain/trial-balance.js";
import { ledgerConsumers } from "./events/consumers.js";
import * as ledgerEvents from "./events/ledger-events.js";
import { emitReconciled, statementConsumer } from "./events/reconciliation-events.js";
import { createAdminHandler } from "./handlers/admin-handler.js";
import { answerCodecs, createLedgerHandler } from "./handlers/ledger-handler.js";
import { quoteExpiryWorker } from "./workers/quote-expiry.js";
import { configuredBindingsWorker, fundingInstructionsWorker } from "./workers/rail-bindings.js";

export const SCHEMA = "ledger";

/**
 * ledger: internal and external accounts, the double-entry journal and balances, holds,
 * transactions and transfers with their idempotency, and the routing of rail instructions to
 * connectors. Serves LedgerService (and, for operators, LedgerAdminService: trial balance and rail
 * bindings, which the gateway does not route); produces corridor.ledger.v1 and the rail
 * instruction topics (corridor.rails.v1, corridor.rails.<connector>.v1); consumes corridor.platforms.v1, corridor.customers.v1,
 * corridor.rail-outcomes.v1, corridor.rail-statements.v1 (bank statements, reconciled: corridor.reconciliations.v1) and corridor.sandbox.v1; asks auth-sessions and customers-kyc only
 * when its event-fed copies cannot answer (domain/facts.ts); runs the quote-expiry worker.
 */
export const service: ServiceModule = {
  name: "ledger",
  schema: SCHEMA,
  migrationsDir: fileURLToPath(new URL("../migrations", import.meta.url)),
  build: (deps) =>
    buildLedger({
      ...deps,
      directory: connectDirectory({ authSessions: deps.transportFor("auth-sessions"), customersKyc: deps.transportFor("customers-kyc"), configBoard: deps.configBoard }),
      walletSignatures: connectWalletSignatures(() => deps.transportFor("auth-sessions")),
    }),
};

/** The service from the deps it uses; tests pass a fake Directory (the RPC fallback of the event-fed copies). */
export function buildLedger(deps: Pick<ServiceDeps, "db" | "clock"> & Partial<Pick<ServiceDeps, "env" | "log">> & { directory: Directory; walletSignatures: WalletSignatures }): BuiltService {
  const config = loadLedgerConfig(deps.env);
  const db = deps.db.forSchema<LedgerDatabase>(SCHEMA);
  const directory = withEventCopies(
    { environment: (platformId) => platformEnvironmentCopy(db, platformId), customer: (platformId, customerId) => customerCopy(db, platformId, customerId) },
    deps.directory,
  );
  const store = createStore(db, ledgerEvents);
  // Rail instructions waiting per connector, read at each scrape (a no-op without metrics).
  observeRailBacklog(railBacklogReader(db, [SANDBOX_CONNECTOR]));
  const ledger = createLedger({ store, clock: deps.clock, directory, idempotent: idempotencyRunner(idempotencyKeyStore(db), deps.clock), answers: answerCodecs, log: deps.log, fundingBanks: config.LEDGER_FUNDING_BANK_ACCOUNTS, walletSignatures: deps.walletSignatures, ownership: { signatureTtlMs: config.LEDGER_OWNERSHIP_SIGNATURE_TTL_SECONDS * 1000, signatureMaxAttempts: config.LEDGER_OWNERSHIP_SIGNATURE_MAX_ATTEMPTS } });
  const cards = createCards({ store: cardStore(db, cardEvents), clock: deps.clock, directory });
  const reconciliation = createReconciliation({ store: reconciliationStore(db, emitReconciled), clock: deps.clock, log: deps.log });
  const runOnce = quoteExpiryPass({
    clock: deps.clock,
    due: (now, limit, after) => dueQuoteTransactions(db, now, limit, after),
    expire: ledger.expireQuoteTransaction,
    log: deps.log,
  });
  return {
    // No per-service router options: they would replace the host's interceptors.
    routes(router) {
      router.service(LedgerService, createLedgerHandler({ ledger }));
      router.service(LedgerAdminService, createAdminHandler({ trialBalance: createTrialBalance(store), ledger, reconciliation }));
      router.service(CardsService, createCardsHandler({ cards }));
    },
    consumers: [...ledgerConsumers(ledger, deps.log, cards), statementConsumer(reconciliation)],
    workers: [
      quoteExpiryWorker({ runOnce, log: deps.log ?? { warn: () => {}, debug: () => {} }, pollMs: config.LEDGER_QUOTE_EXPIRY_POLL_MS }),
      ...(config.LEDGER_RAIL_BINDINGS.length ? [configuredBindingsWorker({ ledger, bindings: config.LEDGER_RAIL_BINDINGS, log: deps.log })] : []),
      ...(config.LEDGER_FUNDING_BANK_ACCOUNTS.length ? [fundingInstructionsWorker({ ledger, log: deps.log })] : []),
    ],
  };
}

export { createLedger, type Ledger } from "./domain/ledger.js";
export type { Directory } from "./domain/ports.js";
export { connectDirectory } from "./clients/directory.js";
export { connectWalletSignatures } from "./clients/wallet-signatures.js";
