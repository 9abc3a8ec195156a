import type { TestProject } from "vitest/node";
import type { JWK } from "jose";
import { serveMailbox, startMailCatcher } from "../support/mail-catcher.js";
import { E2E_OIDC_AUDIENCES, E2E_OIDC_JWKS_CACHE_MS, startOidcProvider, type OidcProviderRef } from "../support/oidc-provider.js";
import { startRateFeed } from "../support/rate-feed.js";
import { localIssuer } from "../support/wallet-client.js";
import { splitDist } from "./split-dist.js";
import { startSplitSystem, type SplitSystemInfo } from "./split-system.js";

declare module "vitest" {
  export interface ProvidedContext {
    splitSystem: SplitSystemInfo | null;
    splitSkipReason: string;
    /**
     * Why the project's split system could not be started, or "": its suites then fail with it
     * (startTestSystem throws it) while every other project runs on.
     */
    splitSetupError: string;
    /** A local OIDC issuer the split processes trust (production OAUTH flows). */
    splitOidcIssuer: { issuer: string; audience: string; privateJwk: JWK } | null;
    /** A real OpenID provider (oidc-provider, loopback HTTPS, a CA of the run) the split processes trust by discovery. */
    splitOidcProvider: OidcProviderRef | null;
    /** HTTP view (test/support/mail-catcher.ts remoteMailbox) of the SMTP catcher the split processes mail to. */
    splitMailboxUrl: string | null;
  }
}

/** The operator's bank production accounts are paid into in the end-to-end systems (LEDGER_FUNDING_BANK_ACCOUNTS). */
export const E2E_FUNDING_BANK_ACCOUNTS = JSON.stringify([{ currency: "USD", bankName: "Corridor E2E Operator Bank", accountNumber: "000123456789", routingNumber: "121042882" }]);

/** The at-rest wallet key the end-to-end systems run with (a test value, never a real one). */
export const E2E_WALLET_ENCRYPTION_KEY = "e2".repeat(32);

/**
 * Global setup of the e2e-split project: one split system (8 processes) for the whole project.
 * It needs real Postgres, Redis and Kafka; without them the split suites are skipped and say why.
 */
export default async function setup(project: TestProject) {
  return setupSplit(project, await splitDist("e2e-split"));
}

/** The split system of a project, with `extraEnv` on top of the suites' settings (replicas: split-replicas-setup.ts). */
export async function setupSplit(project: TestProject, extraEnv: Record<string, string>) {
  const missing = ["DATABASE_URL", "REDIS_URL", "KAFKA_BROKERS"].filter((k) => !process.env[k]);
  if (missing.length > 0) {
    provideNoSystem(project, { skipReason: `split mode needs ${missing.join(", ")}`, setupError: "" });
    console.warn(`[e2e-split] skipped: split mode needs ${missing.join(", ")} (CI sets them via .ci/run)`);
    return;
  }
  const issuer = await localIssuer("https://issuer.e2e.local", "corridor-e2e");
  // OTP mails go to a local SMTP catcher; workers (other processes) read it over loopback HTTP.
  const catcher = await startMailCatcher();
  const mailbox = await serveMailbox(catcher);
  // The real OpenID provider of test/e2e/oauth-oidc-provider.test.ts (key rotation included).
  const provider = await startOidcProvider();
  // Production platforms' rates come from an ECB-format feed quotes-fx pulls (docs/fx.md).
  const feed = await startRateFeed();
  const system = await startSplitSystem(
    {
      DATABASE_URL: process.env.DATABASE_URL!,
      REDIS_URL: process.env.REDIS_URL!,
      KAFKA_BROKERS: process.env.KAFKA_BROKERS!,
    },
    {
      CORRIDOR_OIDC_ISSUERS: JSON.stringify([
        { issuer: issuer.issuer, audience: issuer.audience, jwks: issuer.jwks },
        { issuer: provider.issuer, audience: E2E_OIDC_AUDIENCES },
      ]),
      CORRIDOR_OIDC_CA_FILE: provider.caFile,
      CORRIDOR_OIDC_ALLOW_LOOPBACK: "true",
      CORRIDOR_OIDC_JWKS_CACHE_MS: String(E2E_OIDC_JWKS_CACHE_MS),
      CORRIDOR_OIDC_JWKS_COOLDOWN_MS: "0",
      CORRIDOR_WALLET_ENCRYPTION_KEY: E2E_WALLET_ENCRYPTION_KEY,
      LEDGER_FUNDING_BANK_ACCOUNTS: E2E_FUNDING_BANK_ACCOUNTS,
      CORRIDOR_SMTP_URL: catcher.smtpUrl,
      CORRIDOR_FX_SANDBOX_DRIFT_BPS: "0",
      CORRIDOR_FX_RATE_FEED_URL: feed.url,
      CORRIDOR_FX_RATE_FEED_FORMAT: "ecb-xml",
      NOTIFICATIONS_DELIVERY_POLL_MS: "200",
      // A process that dies fails the run loudly rather than being restarted behind the suites'
      // backs (the chaos suite, test/chaos, is where restarts are exercised).
      CORRIDOR_SPLIT_RESTART_LIMIT: "0",
      ...extraEnv,
    },
  ).catch(async (err: unknown) => {
    await provider.close();
    await feed.close();
    await mailbox.close();
    await catcher.close();
    return err instanceof Error ? err : new Error(String(err));
  });
  if (system instanceof Error) {
    // A global setup that throws ends the whole run, every other project with it (a CI run once
    // reported 0 tests for this alone): this project's suites fail with the reason instead.
    console.error(`[e2e-split] the split system did not start; this project's suites fail with: ${system.message}`);
    provideNoSystem(project, { skipReason: "", setupError: `the project's split system did not start: ${system.message}` });
    return;
  }
  project.provide("splitOidcIssuer", { issuer: issuer.issuer, audience: issuer.audience, privateJwk: issuer.privateJwk });
  project.provide("splitOidcProvider", { issuer: provider.issuer, caPem: provider.caPem });
  project.provide("splitSystem", system.info);
  project.provide("splitMailboxUrl", mailbox.url);
  project.provide("splitSkipReason", "");
  project.provide("splitSetupError", "");
  return async () => {
    await system.stop();
    await provider.close();
    await feed.close();
    await mailbox.close();
    await catcher.close();
  };
}

/** The project has no split system: its suites skip with `skipReason`, or fail with `setupError`. */
function provideNoSystem(project: TestProject, why: { skipReason: string; setupError: string }): void {
  project.provide("splitSystem", null);
  project.provide("splitOidcIssuer", null);
  project.provide("splitOidcProvider", null);
  project.provide("splitMailboxUrl", null);
  project.provide("splitSkipReason", why.skipReason);
  project.provide("splitSetupError", why.setupError);
}
