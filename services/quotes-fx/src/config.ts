import { env, loadConfig, z } from "@corridor/kit";
import { feeRulesSchema } from "./domain/fees.js";

const feeRulesJson = z
  .string()
  .default("{}")
  .transform((text, ctx) => {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      ctx.addIssue({ code: "custom", message: "must be a JSON object" });
      return z.NEVER;
    }
  })
  .pipe(feeRulesSchema);

const schema = z.object({
  /** The feed production platforms' rates are pulled from on a schedule (docs/fx.md); unset: only the operator's pushes. */
  CORRIDOR_FX_RATE_FEED_URL: env.optionalUrl(),
  /** What the feed answers: `json` ({base, rates, timestamp?}) or `ecb-xml` (the ECB's eurofxref-daily.xml). */
  CORRIDOR_FX_RATE_FEED_FORMAT: z.enum(["json", "ecb-xml"]).default("json"),
  /** How often the feed is pulled, seconds (the ECB publishes once per business day). */
  CORRIDOR_FX_RATE_FEED_POLL_SECONDS: env.int(3_600).pipe(z.number().int().min(10).max(86_400)),
  /**
   * The oldest production rate a quote may use, seconds; older → 503 RATES_UNAVAILABLE. 96 h lets
   * a once-a-business-day feed (ECB) carry a weekend; an operator pushing intraday rates sets less.
   */
  CORRIDOR_FX_RATE_MAX_AGE_SECONDS: env.int(345_600).pipe(z.number().int().min(60)),
  /** Authorization header value sent to the feed, if it needs one. */
  CORRIDOR_FX_RATE_FEED_AUTHORIZATION: z.string().optional(),
  /** Give up on a pull of the feed after this long (the pull fails; the next poll tries again). */
  CORRIDOR_FX_RATE_FEED_TIMEOUT_MS: env.int(5_000).pipe(z.number().int().min(100).max(60_000)),
  /** How long a rate table is reused (decisions §7: about 5 minutes). */
  CORRIDOR_FX_RATE_CACHE_SECONDS: env.int(300).pipe(z.number().int().min(0).max(3_600)),
  /** Largest sandbox drift of a rate per 5-minute bucket, in basis points; 0 freezes the sandbox table. */
  CORRIDOR_FX_SANDBOX_DRIFT_BPS: env.int(50).pipe(z.number().int().min(0).max(1_000)),
  /** Fee rules by "default" | "SEND:*" | "*:RECV" | "SEND:RECV" (see README); merged over the built-ins. */
  CORRIDOR_QUOTE_FEES: feeRulesJson,
  /** How long a receiver lookup (and later a quote) stays usable. */
  CORRIDOR_QUOTE_TTL_SECONDS: env.int(300).pipe(z.number().int().min(60).max(300)),
  /** How often the expiry worker looks for PENDING quotes past expiresAt (reads and executes also expire them). */
  CORRIDOR_QUOTE_EXPIRY_POLL_MS: env.int(5_000).pipe(z.number().int().min(100).max(600_000)),
  /** How long a platform has to approve or reject an incoming payment it acknowledged with 202 (decisions §8: 5 s). */
  CORRIDOR_INCOMING_APPROVAL_WINDOW_SECONDS: env.int(5).pipe(z.number().int().min(1).max(3_600)),
  /**
   * How long notifications may wait for an approval webhook's reply (keep it ≥ notifications'
   * NOTIFICATIONS_WEBHOOK_TIMEOUT_MS): the guard row recorded before the exchange expires after it
   * plus the approval window.
   */
  CORRIDOR_INCOMING_WEBHOOK_TIMEOUT_SECONDS: env.int(10).pipe(z.number().int().min(1).max(600)),
  /** How often the approval-timeout worker looks for acknowledged incoming payments past their window. */
  CORRIDOR_INCOMING_APPROVAL_POLL_MS: env.int(500).pipe(z.number().int().min(50).max(60_000)),
  /**
   * How long the approval-timeout worker rests while no incoming payment awaits its platform (a
   * payment this process records wakes it at once); never shorter than the poll above.
   */
  CORRIDOR_INCOMING_APPROVAL_IDLE_POLL_MS: env.int(10_000).pipe(z.number().int().min(50).max(600_000)),
});

export type QuotesFxConfig = z.infer<typeof schema>;

export function loadQuotesFxConfig(source: NodeJS.ProcessEnv): QuotesFxConfig {
  return loadConfig(schema, source);
}
