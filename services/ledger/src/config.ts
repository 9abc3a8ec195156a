import { loadConfig, z } from "@corridor/kit";

/** Default pause between two passes of the quote-transaction expiry worker. */
export const DEFAULT_QUOTE_EXPIRY_POLL_MS = 5_000;

/** Defaults of the wallet-signature ownership challenge (domain/ownership.ts). */
export const DEFAULT_OWNERSHIP_SIGNATURE_TTL_SECONDS = 900;
export const DEFAULT_OWNERSHIP_SIGNATURE_MAX_ATTEMPTS = 1;

const schema = z.object({
  /**
   * How long a WALLET_SIGNATURE ownership challenge (Spark wallets) can be answered, in seconds
   * (1 minute to 7 days). After it, verify answers 400 OWNERSHIP_CHALLENGE_EXPIRED and the account
   * is UNVERIFIED until a new challenge.
   */
  LEDGER_OWNERSHIP_SIGNATURE_TTL_SECONDS: z.coerce.number().int().min(60).max(7 * 24 * 3600).default(DEFAULT_OWNERSHIP_SIGNATURE_TTL_SECONDS),
  /**
   * Invalid signatures a WALLET_SIGNATURE challenge takes before it fails (the account UNVERIFIED),
   * 1 to 10. The default, 1, is Grid's documented behaviour: an invalid signature moves the account
   * to UNVERIFIED and the client starts a new challenge.
   */
  LEDGER_OWNERSHIP_SIGNATURE_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(10).default(DEFAULT_OWNERSHIP_SIGNATURE_MAX_ATTEMPTS),
  /**
   * Pause between two passes of the quote-transaction expiry worker (positive integer ms). Unlike
   * the other knobs of the house, a value that is not a positive integer falls back to the default
   * instead of failing startup: that is how the ledger has always read it, and a deployment that
   * sets it badly keeps running with the safety net on.
   */
  LEDGER_QUOTE_EXPIRY_POLL_MS: z.coerce.number().int().positive().catch(DEFAULT_QUOTE_EXPIRY_POLL_MS),
  /**
   * The operator's rail bindings from configuration (the Helm chart's `railBindings`): a JSON array
   * of {platformId, currency, paymentRail, connector}, set (source CONFIG) at every start; bindings
   * made with the CLI stay. Empty: none.
   */
  LEDGER_RAIL_BINDINGS: z
    .string()
    .default("[]")
    .transform((v, ctx) => {
      try {
        return JSON.parse(v) as unknown;
      } catch {
        ctx.addIssue({ code: "custom", message: "must be JSON" });
        return z.NEVER;
      }
    })
    .pipe(z.array(z.object({ platformId: z.string().min(1), currency: z.string().min(1), paymentRail: z.string().min(1), connector: z.string().min(1) }).strict())),
  /**
   * The operator's bank accounts production platforms are paid into, per currency (docs/connectors.md
   * "What a bank says that is no outcome"): a JSON array of {currency, bankName, accountNumber and
   * routingNumber (US) or iban and optional bic (SEPA)}. A production platform's fiat internal
   * accounts show these in their funding instructions (with the account's own reference), and a
   * credit the bank reports is matched against them. Empty: production accounts keep the sandbox
   * bank's instructions, and their deposits go to suspense (ACCOUNT_MISMATCH).
   */
  LEDGER_FUNDING_BANK_ACCOUNTS: z
    .string()
    .default("[]")
    .transform((v, ctx) => {
      try {
        return JSON.parse(v) as unknown;
      } catch {
        ctx.addIssue({ code: "custom", message: "must be JSON" });
        return z.NEVER;
      }
    })
    .pipe(
      z.array(
        z
          .object({
            currency: z.string().regex(/^[A-Z]{3}$/),
            bankName: z.string().min(1),
            accountNumber: z.string().regex(/^[0-9A-Za-z-]{1,17}$/).optional(),
            routingNumber: z.string().regex(/^[0-9]{9}$/).optional(),
            iban: z.string().regex(/^[A-Z]{2}[0-9]{2}[A-Za-z0-9]{1,30}$/).optional(),
            bic: z.string().regex(/^[A-Z0-9]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$/).optional(),
          })
          .strict()
          .refine((b) => (b.accountNumber && b.routingNumber) || b.iban, "needs accountNumber and routingNumber, or iban"),
      ),
    ),
});

export type LedgerConfig = z.infer<typeof schema>;

/** Every env knob the ledger reads, from the host's env (process.env in a host, a map in tests). */
export function loadLedgerConfig(source: NodeJS.ProcessEnv = {}): LedgerConfig {
  return loadConfig(schema, source);
}

/** The expiry worker's poll interval from an env map (kept for callers of the old reader). */
export function quoteExpiryPollMs(env: NodeJS.ProcessEnv | undefined): number {
  return loadLedgerConfig(env ?? {}).LEDGER_QUOTE_EXPIRY_POLL_MS;
}
