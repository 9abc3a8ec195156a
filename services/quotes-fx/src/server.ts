import { fileURLToPath } from "node:url";
import { inTransaction, type BuiltService, type PollingWorker, type ServiceDeps, type ServiceModule } from "@corridor/kit";
import { QuotesFxAdminService } from "@corridor/proto/corridor/quotes_fx/v1/quotes_fx_admin_service_pb.js";
import { QuotesFxService } from "@corridor/proto/corridor/quotes_fx/v1/quotes_fx_service_pb.js";
import { ledgerPort } from "./clients/ledger.js";
import { platformDirectory } from "./clients/platforms.js";
import { quoteLedgerPort } from "./clients/quote-ledger.js";
import { sandboxClock } from "./clients/sandbox-clock.js";
import { walletSignaturePort } from "./clients/wallet-auth.js";
import { scaPort } from "./clients/sca.js";
import { loadQuotesFxConfig } from "./config.js";
import { idempotencyRunner } from "./data/idempotency.js";
import { lookupStore } from "./data/lookups.js";
import { productionRateStore } from "./data/production-rates.js";
import { platformFeeStore } from "./data/platform-fees.js";
import { quoteStore } from "./data/quotes.js";
import type { QuotesFxDatabase } from "./data/tables.js";
import { createFx } from "./domain/fx.js";
import { createLookups } from "./domain/lookups.js";
import type { LedgerPort, PlatformDirectory, QuoteLedgerPort, ScaPort, WalletSignaturePort } from "./domain/ports.js";
import { createQuoteLifecycle } from "./domain/quote-lifecycle.js";
import { platformClock } from "./domain/platform-clock.js";
import { storedRateSource } from "./domain/production-rates.js";
import { createQuotePreparation } from "./domain/quotes.js";
import { cachedRateSource, sandboxRateSource, type RateSource } from "./domain/rates.js";
import { createWithdrawals } from "./domain/withdrawals.js";
import { incomingGuardConsumer } from "./events/incoming-guard-consumer.js";
import { ledgerTransactionConsumer } from "./events/ledger-consumer.js";
import { createAdminHandler } from "./handlers/admin.js";
import { createQuotesFxHandler } from "./handlers/quotes-fx.js";
import { expiryWorker } from "./workers/expiry.js";
import { incomingPorts } from "./clients/incoming.js";
import { approvalStore } from "./data/incoming-approvals.js";
import { createIncomingPayments, type IncomingPorts, type TxLike } from "./domain/incoming.js";
import { createIncomingHandler } from "./handlers/incoming.js";
import { approvalTimeoutWorker } from "./workers/approval-timeout.js";
import { rateFeedWorker } from "./workers/rate-feed.js";

export const SCHEMA = "quotes_fx";

/**
 * quotes-fx: rates, fees, receiver lookups, quote validation and pricing, withdrawal fee
 * estimates, and the quote lifecycle (create, read, expire, execute, real-time funding). Serves
 * QuotesFxService; calls auth-sessions (platform config, wallet signatures) and the ledger (accounts,
 * quote transactions). Consumes the ledger's quote topics (quote status follows its transaction); runs the
 * quote-expiry worker.
 */
export const service: ServiceModule = {
  name: "quotes-fx",
  schema: SCHEMA,
  migrationsDir: fileURLToPath(new URL("../migrations", import.meta.url)),
  build: (deps) => {
    // One sandbox clock client for quotes and incoming payments.
    const sandboxNow = sandboxClock(() => deps.transportFor("sandbox"));
    return buildQuotesFx({
      ...deps,
      log: deps.log,
      platforms: platformDirectory(() => deps.transportFor("auth-sessions"), deps.configBoard),
      ledger: ledgerPort(() => deps.transportFor("ledger")),
      quoteLedger: quoteLedgerPort(() => deps.transportFor("ledger")),
      signer: walletSignaturePort(() => deps.transportFor("auth-sessions")),
      sca: scaPort(() => deps.transportFor("auth-sessions")),
      sandboxNow,
      incoming: incomingPorts({
        customersKyc: () => deps.transportFor("customers-kyc"),
        ledger: () => deps.transportFor("ledger"),
        notifications: () => deps.transportFor("notifications"),
        sandboxNow,
      }),
    });
  },
};

/** The service from the deps it uses; tests pass fakes for auth-sessions, the ledger and (optionally) the production rate source. */
export function buildQuotesFx(
  deps: Pick<ServiceDeps, "db" | "clock" | "env"> & {
    platforms: PlatformDirectory;
    ledger: LedgerPort;
    quoteLedger: QuoteLedgerPort;
    signer: WalletSignaturePort;
    /** auth-sessions' strong customer authentication (docs/sca.md); without it no quote waits for SCA. */
    sca?: ScaPort;
    /** SandboxService.GetClock: sandbox platforms' quotes expire by it; without it, by the service clock. */
    sandboxNow?: (platformId: string) => Promise<Date>;
    /** Incoming UMA payments (issue 5); without it those RPCs answer 501. */
    incoming?: IncomingPorts<TxLike & any>;
    productionRates?: RateSource;
    log?: Pick<ServiceDeps["log"], "warn" | "debug">;
  },
): BuiltService {
  const config = loadQuotesFxConfig(deps.env);
  const db = deps.db.forSchema<QuotesFxDatabase>(SCHEMA);
  const ttlMs = config.CORRIDOR_FX_RATE_CACHE_SECONDS * 1000;
  const productionRateTable = productionRateStore(db);
  const platformFees = platformFeeStore(db);
  const fx = createFx({
    clock: deps.clock,
    sandboxRates: cachedRateSource(sandboxRateSource({ maxDriftBps: config.CORRIDOR_FX_SANDBOX_DRIFT_BPS }), ttlMs),
    // Read on every use, never cached: a quote must not price with a rate that aged past the limit meanwhile.
    productionRates:
      deps.productionRates ??
      storedRateSource({
        maxAgeMs: config.CORRIDOR_FX_RATE_MAX_AGE_SECONDS * 1000,
        read: async () => (await productionRateTable.all()).map((r) => ({ currency: r.currency, usdValue: r.usd_value, source: r.source, asOf: r.as_of })),
      }),
    feeRules: config.CORRIDOR_QUOTE_FEES,
    platformFees,
  });
  const idempotent = idempotencyRunner(db, deps.clock);
  // Quotes and lookups live on the clock they expire by (a sandbox platform's clock may have been advanced).
  const platformTime = deps.sandboxNow
    ? platformClock({ clock: deps.clock, environment: async (id) => (await deps.platforms.facts(id)).environment, sandboxNow: deps.sandboxNow })
    : undefined;
  const lookups = createLookups({ clock: deps.clock, platformClock: platformTime, fx, platforms: deps.platforms, ledger: deps.ledger, transactions: deps.quoteLedger, store: lookupStore(db), ttlMs: config.CORRIDOR_QUOTE_TTL_SECONDS * 1000 });
  const quotes = createQuoteLifecycle({
    clock: deps.clock,
    platformClock: platformTime,
    ttlMs: config.CORRIDOR_QUOTE_TTL_SECONDS * 1000,
    prepare: createQuotePreparation({ fx, platforms: deps.platforms, ledger: deps.ledger, lookups }),
    ledger: deps.quoteLedger,
    signer: deps.signer,
    sca: deps.sca,
    store: quoteStore(db),
    idempotent,
  });
  const handler = createQuotesFxHandler({
    fx,
    platforms: deps.platforms,
    lookups,
    withdrawals: createWithdrawals({ fx, platforms: deps.platforms, ledger: deps.ledger }),
    quotes,
  });
  const log = deps.log ?? { warn: () => {}, debug: () => {} };
  const incoming = deps.incoming
    ? createIncomingPayments({
        ports: deps.incoming,
        store: approvalStore(db),
        clock: deps.clock,
        receivingCurrency: async (platformId, currency) => {
          const c = (await deps.platforms.facts(platformId)).supportedCurrencies.find((k) => k.currencyCode === currency);
          return { requestedFields: c?.providerRequiredCustomerFields ?? [], incomingEnabled: !c?.enabledTransactionTypes || c.enabledTransactionTypes.includes("INCOMING") };
        },
        windowMs: config.CORRIDOR_INCOMING_APPROVAL_WINDOW_SECONDS * 1000,
        webhookTimeoutMs: config.CORRIDOR_INCOMING_WEBHOOK_TIMEOUT_SECONDS * 1000,
        log,
        onAwaiting: (): void => approvalTimeout?.wake(),
      })
    : undefined;
  const approvalTimeout: PollingWorker | undefined = incoming
    ? approvalTimeoutWorker(incoming, log, { pollMs: config.CORRIDOR_INCOMING_APPROVAL_POLL_MS, idlePollMs: config.CORRIDOR_INCOMING_APPROVAL_IDLE_POLL_MS })
    : undefined;
  return {
    // No per-service options here: they would replace the host's interceptors (docs/architecture.md).
    routes(router) {
      router.service(QuotesFxService, {
        ...handler,
        ...createIncomingHandler(incoming, { idempotent, inTransaction: (fn) => inTransaction(db, (trx) => fn(trx)) }),
      });
      // The operator's rates (the admin CLI); the gateway routes none of it.
      router.service(QuotesFxAdminService, createAdminHandler({
          store: productionRateTable,
          clock: deps.clock,
          maxAgeMs: config.CORRIDOR_FX_RATE_MAX_AGE_SECONDS * 1000,
          fees: { store: platformFees, deploymentRules: config.CORRIDOR_QUOTE_FEES, platforms: deps.platforms },
        }));
    },
    consumers: [ledgerTransactionConsumer(quotes), ...(incoming ? [incomingGuardConsumer(deps.clock)] : [])],
    workers: [
      expiryWorker(quotes, log, config.CORRIDOR_QUOTE_EXPIRY_POLL_MS),
      ...(approvalTimeout ? [approvalTimeout] : []),
      ...(config.CORRIDOR_FX_RATE_FEED_URL
        ? [
            rateFeedWorker(
              {
                url: config.CORRIDOR_FX_RATE_FEED_URL,
                format: config.CORRIDOR_FX_RATE_FEED_FORMAT,
                authorization: config.CORRIDOR_FX_RATE_FEED_AUTHORIZATION,
                timeoutMs: config.CORRIDOR_FX_RATE_FEED_TIMEOUT_MS,
                pollMs: config.CORRIDOR_FX_RATE_FEED_POLL_SECONDS * 1000,
              },
              productionRateTable,
              deps.clock,
              log,
            ),
          ]
        : []),
    ],
  };
}
