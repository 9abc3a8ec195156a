import { fileURLToPath } from "node:url";
import type { BuiltService, ServiceDeps, ServiceModule } from "@corridor/kit";
import { LedgerAdminService } from "@corridor/proto/corridor/ledger/v1/ledger_admin_service_pb.js";
import { LedgerService } from "@corridor/proto/corridor/ledger/v1/ledger_service_pb.js";
import { connectDirectory } from "./app/directory.js";
import { createLedger, type Directory } from "./app/ledger.js";
import type { LedgerDatabase } from "./data/tables.js";
import { ledgerConsumers } from "./events/consumers.js";
import { createTrialBalance } from "./app/trial-balance.js";
import { createAdminHandler } from "./handlers/admin-handler.js";
import { createLedgerHandler } from "./handlers/ledger-handler.js";
import { quoteExpiryPollMs, quoteExpiryWorker } from "./workers/quote-expiry.js";

export const SCHEMA = "ledger";

/**
 * ledger: internal and external accounts, the double-entry journal and balances, holds,
 * transactions and transfers with their idempotency. Serves LedgerService (and, for operators,
 * the read-only LedgerAdminService, which the gateway does not route); produces
 * corridor.ledger.v1 and corridor.rails.v1; consumes corridor.platforms.v1, corridor.customers.v1
 * and corridor.rail-outcomes.v1.
 */
export const service: ServiceModule = {
  name: "ledger",
  schema: SCHEMA,
  migrationsDir: fileURLToPath(new URL("../migrations", import.meta.url)),
  build: (deps) =>
    buildLedger({
      ...deps,
      directory: connectDirectory({ authSessions: deps.transportFor("auth-sessions"), customersKyc: deps.transportFor("customers-kyc") }),
    }),
};

/** The service from the deps it uses; tests pass a fake Directory. */
export function buildLedger(deps: Pick<ServiceDeps, "db" | "clock"> & Partial<Pick<ServiceDeps, "env" | "log">> & { directory: Directory }): BuiltService {
  const db = deps.db.forSchema<LedgerDatabase>(SCHEMA);
  const ledger = createLedger({ db, clock: deps.clock, directory: deps.directory });
  return {
    routes(router) {
      router.service(LedgerService, createLedgerHandler({ ledger }));
      router.service(LedgerAdminService, createAdminHandler({ trialBalance: createTrialBalance(db) }));
    },
    consumers: ledgerConsumers(ledger),
    workers: [
      quoteExpiryWorker({ db, clock: deps.clock, expire: ledger.expireQuoteTransaction, log: deps.log, pollMs: quoteExpiryPollMs(deps.env) }),
    ],
  };
}

export { createLedger, type Directory, type Ledger } from "./app/ledger.js";
export { connectDirectory } from "./app/directory.js";
