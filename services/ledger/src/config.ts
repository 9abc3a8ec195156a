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
