import { fileURLToPath } from "node:url";
import { createIdempotencyRunner, idempotencyKeyStore, platformTime, sandboxClockClient, type BuiltService, type Logger, type ServiceDeps, type ServiceModule } from "@corridor/kit";
import { CustomersKycService } from "@corridor/proto/corridor/customers_kyc/v1/customers_kyc_service_pb.js";
import { CustomerImportsService } from "@corridor/proto/corridor/customers_kyc/v1/customer_imports_service_pb.js";
import { KycAdminService } from "@corridor/proto/corridor/customers_kyc/v1/kyc_admin_service_pb.js";
import { customerLedger } from "./clients/ledger.js";
import { platformDirectory } from "./clients/platforms.js";
import { loadCustomersKycConfig } from "./config.js";
import { transactOver } from "./data/store.js";
import type { CustomersKycDatabase } from "./data/tables.js";
import { createCustomers } from "./domain/customers.js";
import { createDocuments } from "./domain/documents.js";
import { createReviewQueue } from "./domain/review-queue.js";
import type { KycProviderFactory } from "./domain/kyc-provider.js";
import { createInvitations } from "./domain/invitations.js";
import { createKycLinks } from "./domain/kyc-links.js";
import { createOwners } from "./domain/owners.js";
import type { CustomerLedger, PlatformDirectory } from "./domain/ports.js";
import { createVerifications } from "./domain/verifications.js";
import { platformUmaConsumer } from "./events/platform-consumer.js";
import { customerEvents } from "./events/customer-events.js";
import { importTransactOver, type CustomerImportsDatabase } from "./data/customer-imports.js";
import { createCustomerImports } from "./domain/customer-imports.js";
import { customerImportEvents } from "./events/customer-import-events.js";
import { createCustomerImportsHandler } from "./handlers/customer-imports.js";
import { customerImportWorker } from "./workers/customer-imports.js";
import { codeDelivery } from "./clients/code-delivery.js";
import { contactTransactOver } from "./data/contact-verifications.js";
import { createContactVerification, type ContactCodeSender } from "./domain/contact-verification.js";
import { createCustomersKycHandler } from "./handlers/customers-kyc.js";
import { createKycAdminHandler } from "./handlers/kyc-admin.js";

export const SCHEMA = "customers_kyc";

/**
 * customers-kyc: customers, KYC/KYB verifications, beneficial owners, invitations, KYC documents
 * and the operator's KYC review queue. Serves CustomersKycService (the gateway; the ledger and
 * quotes ask GetCustomerSummary) and KycAdminService (the operator CLI; never routed). Produces
 * corridor.customers.v1; consumes corridor.platforms.v1 (default UMA addresses once a platform has a
 * UMA domain); calls auth-sessions for platform settings and the sandbox for a sandbox platform's clock.
 */
export const service: ServiceModule = {
  name: "customers-kyc",
  schema: SCHEMA,
  migrationsDir: fileURLToPath(new URL("../migrations", import.meta.url)),
  build: (deps) =>
    buildCustomersKyc({
      ...deps,
      platforms: platformDirectory(() => deps.transportFor("auth-sessions"), deps.configBoard),
      ledger: customerLedger(() => deps.transportFor("ledger")),
      sandboxNow: sandboxClockClient(() => deps.transportFor("sandbox")),
      log: deps.log,
      codeSender: codeDelivery(() => deps.transportFor("auth-sessions")),
    }),
};

/** The service from the deps it uses; tests pass a fake PlatformDirectory, a fake ledger and a fixed code source. */
export function buildCustomersKyc(
  deps: Pick<ServiceDeps, "db" | "clock" | "env"> & {
    platforms: PlatformDirectory;
    ledger: CustomerLedger;
    newInvitationCode?: () => string;
    /** A sandbox platform's clock (SandboxService.GetClock); absent: sandbox platforms are on the service clock. */
    sandboxNow?: (platformId: string) => Promise<Date>;
    /** The KYC provider connector (docs/connectors.md); absent: the operator's review queue. */
    kycProvider?: KycProviderFactory;
    /** Where background workers report failed passes. */
    log?: Pick<Logger, "warn">;
    /** Delivers contact-verification codes (auth-sessions' CodeDeliveryService); absent: sends fail. */
    codeSender?: ContactCodeSender;
    /** Tests fix contact-verification codes; default: six random digits. */
    newContactCode?: () => string;
  },
): BuiltService {
  const config = loadCustomersKycConfig(deps.env);
  const db = deps.db.forSchema<CustomersKycDatabase>(SCHEMA);
  const transact = transactOver(db, customerEvents);
  const common = { transact, clock: deps.clock, platforms: deps.platforms };
  // Invitation and KYC link expiry follow a sandbox platform's sandbox clock (POST /sandbox/clock/advance).
  const time = platformTime({
    clock: deps.clock,
    environment: async (platformId) => (await deps.platforms.settings(platformId)).environment,
    sandboxNow: deps.sandboxNow ?? (async () => deps.clock.now()),
  });
  // The KYC provider connector that ships: the operator's review queue.
  const queue = createReviewQueue({ transact, clock: deps.clock });
  const provider = deps.kycProvider ? deps.kycProvider({ transact, clock: deps.clock }) : queue.provider;
  const documents = createDocuments({ transact, clock: deps.clock, maxBytes: config.CORRIDOR_KYC_DOCUMENT_MAX_BYTES, contentTypes: config.CORRIDOR_KYC_DOCUMENT_CONTENT_TYPES });
  const handler = createCustomersKycHandler({
    customers: createCustomers({ ...common, ledger: deps.ledger }),
    verifications: createVerifications({ ...common, provider }),
    owners: createOwners(common),
    invitations: createInvitations({ transact, clock: deps.clock, time, baseUrl: config.CORRIDOR_INVITATION_BASE_URL, newCode: deps.newInvitationCode }),
    kycLinks: createKycLinks({ ...common, time, provider, documents, ttlMs: config.CORRIDOR_KYC_LINK_TTL_SECONDS * 1000 }),
    documents,
    contact: createContactVerification({
      transact: contactTransactOver(db),
      clock: deps.clock,
      platformNow: (platformId) => time.now(platformId),
      environment: async (platformId) => (await deps.platforms.settings(platformId)).environment,
      sender: deps.codeSender ?? missingSender,
      newCode: deps.newContactCode,
    }),
  });
  const admin = createKycAdminHandler({ queue });
  // Bulk imports (POST /customers/bulk/csv): rows stored at upload, customers created by the worker.
  let importWorker: ReturnType<typeof customerImportWorker> | undefined;
  const imports = createCustomerImports({
    transact: importTransactOver(deps.db.forSchema<CustomerImportsDatabase>(SCHEMA), customerEvents, customerImportEvents),
    clock: deps.clock,
    platforms: deps.platforms,
    idempotency: createIdempotencyRunner(idempotencyKeyStore(db), deps.clock),
    limits: { maxBytes: config.CORRIDOR_BULK_IMPORT_MAX_BYTES, maxRows: config.CORRIDOR_BULK_IMPORT_MAX_ROWS },
    onStarted: () => importWorker?.wake(),
  });
  importWorker = customerImportWorker(imports, { pollMs: config.CORRIDOR_BULK_IMPORT_POLL_MS, log: deps.log ?? { warn: () => {} } });
  return {
    // No per-service router options: they would replace the host's interceptors (tracing, and the
    // AppError -> ConnectError mapping that this service once registered itself).
    routes: (router) =>
      router.service(CustomersKycService, handler).service(KycAdminService, admin).service(CustomerImportsService, createCustomerImportsHandler({ imports })),
    consumers: [platformUmaConsumer({ clock: deps.clock, events: customerEvents })],
    workers: [importWorker],
  };
}

const missingSender: ContactCodeSender = {
  send() {
    throw new Error("customers-kyc was built without a code sender; contact verification codes cannot be delivered");
  },
};
