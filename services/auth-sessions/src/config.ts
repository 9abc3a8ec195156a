import { env, loadConfig, webhookTargetEnv, z } from "@corridor/kit";

/** Signature algorithms an OIDC issuer may sign with: asymmetric only (never `none`, never a shared secret). */
export const OIDC_ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA", "Ed25519"] as const;

const httpsUrl = z
  .string()
  .url()
  .refine((s) => new URL(s).protocol === "https:", { message: "must be an https URL" });

/**
 * One trusted OIDC issuer: tokens must carry this `iss` exactly and one of its audiences, and be
 * signed by a key of its JWKS: inline (`jwks`), fetched from `jwksUrl`, or, with neither, found by
 * discovery (`<issuer>/.well-known/openid-configuration`, whose `issuer` must be this one).
 * `platforms` limits it to those production platforms (unset: every platform).
 */
const IssuerSchema = z
  .object({
    issuer: z.string().min(1),
    audience: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]),
    jwksUrl: httpsUrl.optional(),
    jwks: z.object({ keys: z.array(z.record(z.string(), z.unknown())) }).optional(),
    platforms: z.array(z.string().min(1)).min(1).optional(),
    algorithms: z.array(z.enum(OIDC_ALGORITHMS)).min(1).optional(),
  })
  .strict()
  .refine((i) => !(i.jwksUrl && i.jwks), { message: "give at most one of jwksUrl or jwks (neither: discovery from the issuer URL)" })
  .refine((i) => Boolean(i.jwksUrl || i.jwks) || httpsUrl.safeParse(i.issuer).success, {
    message: "without jwksUrl or jwks the issuer must be an https URL (its keys are found by OpenID discovery)",
  });

export type OidcIssuerConfig = z.infer<typeof IssuerSchema>;

const jsonOf = <T extends z.ZodType>(schema: T) =>
  z
    .string()
    .optional()
    .transform((s, ctx) => {
      if (!s) return [];
      try {
        return JSON.parse(s) as unknown;
      } catch {
        ctx.addIssue({ code: "custom", message: "is not JSON" });
        return z.NEVER;
      }
    })
    .pipe(schema);

/**
 * What CORRIDOR_UMA_DOMAIN is until the operator sets it: under `.localhost` (RFC 6761), so it never
 * resolves on the internet and addresses under it are plainly not live; the service warns at start.
 */
export const DEFAULT_OPERATOR_UMA_DOMAIN = "uma.localhost";

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
/** A hostname of at least two labels, short enough that `<slug 40>-<8 hex>.` fits in front (253 in all). */
function isOperatorUmaDomain(s: string): boolean {
  const labels = s.split(".");
  return s.length <= 190 && labels.length >= 2 && labels.every((l) => LABEL.test(l));
}

/** auth-sessions' own settings (the host reads PORT, DATABASE_URL and the rest). */
export const WalletAuthConfigSchema = z.object({
  CORRIDOR_OIDC_ISSUERS: jsonOf(z.array(IssuerSchema)),
  /** PEM file of the CA that signed OIDC issuers' certificates (discovery, JWKS), trusted besides the system's CAs. */
  CORRIDOR_OIDC_CA_FILE: z.string().optional(),
  /** OIDC issuers on loopback (127.0.0.0/8, ::1, localhost) may be reached: development and tests only; https still. */
  CORRIDOR_OIDC_ALLOW_LOOPBACK: env.bool(false),
  /** CIDR ranges an OIDC issuer may be reached at although not public (an issuer in a peered network); empty: public addresses only. */
  CORRIDOR_OIDC_ALLOWED_RANGES: webhookTargetEnv.CORRIDOR_WEBHOOK_ALLOWED_RANGES,
  /** How long a fetched JWKS is trusted before it is fetched again (ms); a key removed by the issuer verifies at most this long. */
  CORRIDOR_OIDC_JWKS_CACHE_MS: env.int(600_000).pipe(z.number().int().min(0).max(86_400_000)),
  /** The least time between two JWKS fetches (ms): a token with an unknown `kid` refetches only after it. */
  CORRIDOR_OIDC_JWKS_COOLDOWN_MS: env.int(30_000).pipe(z.number().int().min(0).max(3_600_000)),
  /** Deadline of one discovery or JWKS fetch (ms). */
  CORRIDOR_OIDC_HTTP_TIMEOUT_MS: env.int(5_000).pipe(z.number().int().min(100).max(60_000)),
  CORRIDOR_SANDBOX_OIDC_ISSUER: z.string().min(1).default("https://oidc.sandbox.corridor.local"),
  CORRIDOR_PASSKEY_RP_ID: z.string().min(1).default("localhost"),
  CORRIDOR_PASSKEY_ORIGINS: env.list(),
  CORRIDOR_WALLET_ENCRYPTION_KEY: z.string().optional(),
  /**
   * The key being replaced while CORRIDOR_WALLET_ENCRYPTION_KEY is rotated: reads open rows it
   * sealed, and the wallet-key-reencrypt worker seals them again under the current key. Unset once
   * the worker reports none left.
   */
  CORRIDOR_WALLET_ENCRYPTION_KEY_PREVIOUS: z.string().optional(),
  /** How often the wallet-key-reencrypt worker looks for wallet keys not sealed under the current key (ms). */
  CORRIDOR_WALLET_REENCRYPT_POLL_MS: z.coerce.number().int().min(100).max(3_600_000).default(60_000),
  /** The mail server EMAIL_OTP codes go through (smtp://user:pass@host:587, smtps://…:465); unset: sandbox codes to the log, production refused. */
  CORRIDOR_SMTP_URL: z.string().url().optional(),
  CORRIDOR_SMTP_FROM: z.string().min(1).default("Corridor <no-reply@localhost>"),
  /** Refuse to send a code unless the server upgrades the connection with STARTTLS (or it is smtps://). */
  CORRIDOR_SMTP_REQUIRE_TLS: env.bool(false),
  /** PEM file of the CA that signed the mail server's certificate, when it is not a public one. */
  CORRIDOR_SMTP_CA_FILE: z.string().optional(),
  /** Attempts to hand a code to the mail server before the request answers 503 EMAIL_DELIVERY_FAILED. */
  CORRIDOR_SMTP_ATTEMPTS: env.int(3).pipe(z.number().int().min(1).max(10)),
  /** Pause before the first retry, ms; doubled before each next one. */
  CORRIDOR_SMTP_RETRY_MS: env.int(250).pipe(z.number().int().min(0).max(10_000)),
  /** The operator's name for this deployment, printed by the operator CLI before it acts. */
  CORRIDOR_DEPLOYMENT_NAME: z.string().default(""),
  /** What a platform's webhookEndpoint may be (loopback for sandbox platforms; operator-allowed ranges): the kit's one definition. */
  ...webhookTargetEnv,
  /** The operator's UMA domain: each production platform gets `<slug>-<8 hex>.<this>` (wildcard DNS and TLS needed). */
  CORRIDOR_UMA_DOMAIN: z
    .string()
    .default(DEFAULT_OPERATOR_UMA_DOMAIN)
    .transform((s) => s.trim().toLowerCase())
    .refine(isOperatorUmaDomain, { message: "must be a DNS hostname with at least two labels, at most 190 characters (platform subdomains go in front)" }),
  /** How often the uma-domain-backfill worker looks for production platforms still without a UMA domain (ms). */
  CORRIDOR_UMA_BACKFILL_POLL_MS: z.coerce.number().int().min(100).max(3_600_000).default(60_000),
});

export type WalletAuthConfig = z.infer<typeof WalletAuthConfigSchema> & { passkeyOrigins: string[] };

export function loadWalletAuthConfig(source: NodeJS.ProcessEnv = process.env): WalletAuthConfig {
  const c = loadConfig(WalletAuthConfigSchema, source);
  return { ...c, passkeyOrigins: c.CORRIDOR_PASSKEY_ORIGINS.length ? c.CORRIDOR_PASSKEY_ORIGINS : ["http://localhost", "https://localhost"] };
}
