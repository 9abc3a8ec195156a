import { loadConfig, z } from "@corridor/kit";

/** Default pause between two passes of the quote-transaction expiry worker. */
export const DEFAULT_QUOTE_EXPIRY_POLL_MS = 5_000;

const schema = z.object({
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
