import { fileURLToPath } from "node:url";
import { pollingWorker, sandboxClockClient, type BuiltService, type ServiceDeps, type ServiceModule } from "@corridor/kit";
import { AuthSessionsService } from "@corridor/proto/corridor/auth_sessions/v1/auth_sessions_service_pb.js";
import { PlatformAdminService } from "@corridor/proto/corridor/auth_sessions/v1/platform_admin_service_pb.js";
import { WalletAuthService } from "@corridor/proto/corridor/auth_sessions/v1/wallet_auth_service_pb.js";
import { ScaService } from "@corridor/proto/corridor/auth_sessions/v1/sca_service_pb.js";
import { LivenessAdminService, LivenessService } from "@corridor/proto/corridor/auth_sessions/v1/liveness_service_pb.js";
import { createLivenessAdminHandler, createLivenessHandler } from "./handlers/liveness.js";
import { scaCustomers } from "./clients/customers.js";
import { scaTransactOver, totpSealedRowsOver, type ScaDatabase } from "./data/sca.js";
import type { ScaCustomerDirectory } from "./domain/sca/ports.js";
import { createSca } from "./domain/sca/sca.js";
import { createScaHandler } from "./handlers/sca.js";
import { ledgerAccounts } from "./clients/ledger-accounts.js";
import { CodeDeliveryService } from "@corridor/proto/corridor/auth_sessions/v1/code_delivery_service_pb.js";
import { createCodeDeliveryHandler } from "./handlers/code-delivery.js";
import { WalletKeysService } from "@corridor/proto/corridor/auth_sessions/v1/wallet_keys_service_pb.js";
import { createWalletKeysHandler } from "./handlers/wallet-keys.js";
import { createMailer, readCaFile, readSmtpCa } from "./clients/mailer.js";
import { createOidcVerifier } from "./clients/oidc.js";
import { createOidcFetch } from "./clients/oidc-http.js";
import { createPasskeyVerifier } from "./clients/passkeys.js";
import { DEFAULT_OPERATOR_UMA_DOMAIN, loadWalletAuthConfig } from "./config.js";
import { walletEncryptionKey, walletKeyring } from "./domain/wallet/at-rest.js";
import { walletKeyReencryption } from "./domain/wallet/reencrypt.js";
import { readOver, transactOver } from "./data/store.js";
import { walletTransactOver } from "./data/wallet.js";
import type { AccountDirectory, Mailer } from "./domain/wallet/ports.js";
import { createWalletAuth } from "./domain/wallet/wallet-auth.js";
import { createWalletAuthHandler } from "./handlers/wallet-auth.js";
import type { AuthSessionsDatabase } from "./data/tables.js";
import { createAuthSessions } from "./domain/auth-sessions.js";
import { platformEvents } from "./events/platform-events.js";
import { createAuthSessionsHandler } from "./handlers/auth-sessions.js";
import { createPlatformAdminHandler } from "./handlers/platform-admin.js";

export const SCHEMA = "auth_sessions";

/**
 * auth-sessions: platforms, API tokens and platform configuration. Serves AuthSessionsService
 * (called by the gateway and other services) and PlatformAdminService (the operator's CLI and
 * the embedded bootstrap). Produces corridor.platforms.v1, corridor.platforms.tokens.v1 and
 * corridor.platforms.delegated-keys.v1 (events/platform-events.ts); consumes nothing.
 */
export const service: ServiceModule = {
  name: "auth-sessions",
  schema: SCHEMA,
  migrationsDir: fileURLToPath(new URL("../migrations", import.meta.url)),
  build: buildAuthSessions,
};

/**
 * The service from the deps it uses. Tests pass db and clock (plus `accounts` to fake the ledger
 * and `env` for wallet-auth settings); without transportFor and accounts, account checks fail.
 */
export function buildAuthSessions(
  deps: Pick<ServiceDeps, "db" | "clock"> & Partial<Pick<ServiceDeps, "log" | "env" | "transportFor" | "configBoard">> & {
    accounts?: AccountDirectory;
    mailer?: Mailer;
    /** SCA's view of customers; default CustomersKycService over transportFor. */
    customers?: ScaCustomerDirectory;
    /** A sandbox platform's clock; default SandboxService.GetClock over transportFor (none without it). */
    sandboxNow?: (platformId: string) => Promise<Date>;
  },
): BuiltService {
  const db = deps.db.forSchema<AuthSessionsDatabase>(SCHEMA);
  const log: { warn(obj: object | string, msg?: string): void; debug(obj: object | string, msg?: string): void } = deps.log ?? { warn: () => {}, debug: () => {} };
  const config = loadWalletAuthConfig(deps.env ?? {});
  const auth = createAuthSessions({
    transact: transactOver(db, platformEvents),
    read: readOver(db),
    clock: deps.clock,
    deploymentName: config.CORRIDOR_DEPLOYMENT_NAME,
    webhookTargets: config,
    operatorUmaDomain: config.CORRIDOR_UMA_DOMAIN,
    board: deps.configBoard,
    onBoardError: (err, platformId, step) =>
      step === "publish"
        ? log.warn({ err, platformId }, "the config board did not take a committed config change; readers ask auth-sessions until its mark expires")
        : log.debug({ err, platformId }, "the config board did not take a read's version; readers keep asking auth-sessions"),
  });
  const walletKey = walletEncryptionKey(config.CORRIDOR_WALLET_ENCRYPTION_KEY);
  if (walletKey.insecureDefault) {
    log.warn("CORRIDOR_WALLET_ENCRYPTION_KEY is not set: wallet keys are encrypted at rest with an INSECURE built-in development key. Set it (32 bytes, hex or base64) for any real deployment; production platforms cannot export wallets without it.");
  }
  if (walletKey.insecureDefault && config.CORRIDOR_WALLET_ENCRYPTION_KEY_PREVIOUS) {
    throw new Error("CORRIDOR_WALLET_ENCRYPTION_KEY_PREVIOUS is set but CORRIDOR_WALLET_ENCRYPTION_KEY is not: set the new key to rotate to");
  }
  const previousWalletKey = config.CORRIDOR_WALLET_ENCRYPTION_KEY_PREVIOUS
    ? walletEncryptionKey(config.CORRIDOR_WALLET_ENCRYPTION_KEY_PREVIOUS, "CORRIDOR_WALLET_ENCRYPTION_KEY_PREVIOUS").key
    : undefined;
  const keyring = walletKeyring(walletKey.key, previousWalletKey);
  if (keyring.previousId) {
    log.warn(
      { walletKeyId: keyring.currentId, previousWalletKeyId: keyring.previousId },
      "wallet encryption key rotation: wallet keys sealed under the previous key stay readable, and the wallet-key-reencrypt worker seals them again under the current key",
    );
  }
  let reportedDone = false;
  // SCA TOTP secrets are sealed under the same key: the worker moves them too.
  const reencryption = walletKeyReencryption({ transact: walletTransactOver(db), keyring, others: [totpSealedRowsOver(deps.db.forSchema<ScaDatabase>(SCHEMA))] });
  if (config.CORRIDOR_UMA_DOMAIN === DEFAULT_OPERATOR_UMA_DOMAIN) {
    log.warn(
      `CORRIDOR_UMA_DOMAIN is not set: production platforms get UMA domains under ${DEFAULT_OPERATOR_UMA_DOMAIN}, which resolves nowhere, so their customers' UMA addresses cannot be paid from outside. Set it to a domain you serve UMA on (with wildcard DNS and TLS for its subdomains).`,
    );
  }
  if (!config.CORRIDOR_SMTP_URL) {
    log.warn(
      "CORRIDOR_SMTP_URL is not set: EMAIL_OTP credentials of PRODUCTION platforms are refused (400 EMAIL_DELIVERY_NOT_CONFIGURED); sandbox platforms' codes are written to this log by the development mailer. Set CORRIDOR_SMTP_URL for any real deployment.",
    );
  }
  const accounts: AccountDirectory = deps.accounts ?? (deps.transportFor ? ledgerAccounts(() => deps.transportFor!("ledger")) : missingLedger);
  const mailer =
    deps.mailer ??
    createMailer({
      smtpUrl: config.CORRIDOR_SMTP_URL,
      from: config.CORRIDOR_SMTP_FROM,
      requireTls: config.CORRIDOR_SMTP_REQUIRE_TLS,
      caPem: readSmtpCa(config.CORRIDOR_SMTP_CA_FILE),
      attempts: config.CORRIDOR_SMTP_ATTEMPTS,
      retryMs: config.CORRIDOR_SMTP_RETRY_MS,
      log,
    });
  const sandboxNow = deps.sandboxNow ?? (deps.transportFor ? sandboxClockClient(() => deps.transportFor!("sandbox")) : undefined);
  const sca = createSca({
    transact: scaTransactOver(deps.db.forSchema<ScaDatabase>(SCHEMA)),
    clock: deps.clock,
    sandboxNow,
    customers: deps.customers ?? (deps.transportFor ? scaCustomers(() => deps.transportFor!("customers-kyc")) : missingCustomers),
    // Only a real mail server (or a test's mailer): SCA codes are never written to the log, so a
    // sandbox platform without one uses the sandbox code (docs/sca.md).
    sender: deps.mailer ?? (config.CORRIDOR_SMTP_URL ? mailer : undefined),
    // TOTP shared secrets are sealed like wallet keys.
    keyring,
  });
  const wallet = createWalletAuth({
    transact: walletTransactOver(db),
    clock: deps.clock,
    // Sandbox platforms' expiries follow their sandbox clock (POST /sandbox/clock/advance).
    sandboxNow,
    accounts,
    mailer,
    oidc: createOidcVerifier({
      issuers: config.CORRIDOR_OIDC_ISSUERS,
      sandboxIssuer: config.CORRIDOR_SANDBOX_OIDC_ISSUER,
      fetch: createOidcFetch({
        allowLoopback: config.CORRIDOR_OIDC_ALLOW_LOOPBACK,
        allowedRanges: config.CORRIDOR_OIDC_ALLOWED_RANGES,
        caPem: readCaFile("CORRIDOR_OIDC_CA_FILE", config.CORRIDOR_OIDC_CA_FILE),
      }).fetch,
      cacheMaxAgeMs: config.CORRIDOR_OIDC_JWKS_CACHE_MS,
      cooldownMs: config.CORRIDOR_OIDC_JWKS_COOLDOWN_MS,
      timeoutMs: config.CORRIDOR_OIDC_HTTP_TIMEOUT_MS,
    }),
    passkeys: createPasskeyVerifier(),
    // Platforms without a relying party of their own (PATCH /config) use the deployment's.
    defaultRelyingParty: { rpId: config.CORRIDOR_PASSKEY_RP_ID, origins: config.passkeyOrigins },
    walletKeys: keyring,
    walletKeysInsecure: walletKey.insecureDefault,
  });
  return {
    // No per-service options here: connect-es lets them replace the host's router interceptors
    // (tracing, error mapping). The host's appErrorInterceptor maps thrown AppErrors.
    routes(router) {
      router.service(AuthSessionsService, createAuthSessionsHandler({ auth }));
      router.service(PlatformAdminService, createPlatformAdminHandler({ auth }));
      router.service(WalletAuthService, createWalletAuthHandler({ wallet }));
      router.service(WalletKeysService, createWalletKeysHandler({ wallet }));
      router.service(CodeDeliveryService, createCodeDeliveryHandler({ mailer, environment: (platformId) => walletTransactOver(db)((store) => store.environmentOf(platformId)) }));
      router.service(ScaService, createScaHandler({ sca }));
      router.service(LivenessService, createLivenessHandler({ liveness: sca.liveness }));
      router.service(LivenessAdminService, createLivenessAdminHandler({ liveness: sca.liveness }));
    },
    consumers: [],
    workers: [
      pollingWorker({
        name: "uma-domain-backfill",
        pass: () => auth.backfillUmaDomains(),
        pollMs: config.CORRIDOR_UMA_BACKFILL_POLL_MS,
        log,
        onPass: (n) => {
          if (n > 0) log.warn({ platforms: n, operatorUmaDomain: config.CORRIDOR_UMA_DOMAIN }, "gave production platforms created before CORRIDOR_UMA_DOMAIN their default UMA domain");
        },
      }),
      pollingWorker({
        name: "wallet-key-reencrypt",
        pass: () => reencryption.pass(),
        pollMs: config.CORRIDOR_WALLET_REENCRYPT_POLL_MS,
        log,
        onPass: (r) => {
          const ids = { walletKeyId: keyring.currentId, previousWalletKeyId: keyring.previousId ?? null };
          if (Object.keys(r.unreadable).length > 0) {
            log.warn(
              { ...ids, unreadableByKeyId: r.unreadable },
              "wallet keys sealed under a key that neither CORRIDOR_WALLET_ENCRYPTION_KEY nor CORRIDOR_WALLET_ENCRYPTION_KEY_PREVIOUS is (by key id): their wallets cannot be exported. If you are rotating, CORRIDOR_WALLET_ENCRYPTION_KEY_PREVIOUS is not the key they were sealed with; set it to the key being replaced",
            );
          }
          if (r.resealed > 0) log.warn({ ...ids, resealed: r.resealed, left: r.left }, "sealed wallet keys again under the current wallet encryption key");
          if (keyring.previousId && r.left === 0 && (r.resealed > 0 || !reportedDone)) {
            reportedDone = true;
            log.warn(ids, "every wallet key is sealed under the current wallet encryption key: CORRIDOR_WALLET_ENCRYPTION_KEY_PREVIOUS can be removed");
          }
        },
      }),
    ],
  };
}

const missingCustomers: ScaCustomerDirectory = {
  get() {
    throw new Error("auth-sessions was built without a customers-kyc transport; SCA cannot look customers up");
  },
};

const noLedger = () => {
  throw new Error("auth-sessions was built without a ledger transport; account checks cannot run");
};
const missingLedger: AccountDirectory = { requireEmbeddedWallet: noLedger, cardFundingSource: noLedger };

export { createAuthSessions } from "./domain/auth-sessions.js";
export { createAuthSessionsHandler } from "./handlers/auth-sessions.js";
export { createPlatformAdminHandler } from "./handlers/platform-admin.js";
export { hashSecret } from "./domain/credentials.js";
