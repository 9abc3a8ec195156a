import { WEBHOOK_TARGET_DEFAULTS, env, metricsPortSetting, serviceUrlSettings, webhookTargetEnv, z, type WebhookTargetSettings } from "@corridor/kit";

/** One entry of the operator's VASP directory (Grid's Vasp). */
export interface Vasp {
  vaspName: string;
  url: string;
}

/** CORRIDOR_VASP_DIRECTORY's entries: exactly {vaspName, url}, https, at most 10,000. */
const vaspEntries = z
  .array(
    z
      .object({
        vaspName: z.string().trim().min(1).max(255),
        url: z.string().url().refine((u) => u.startsWith("https://"), "must be an https URL"),
      })
      .strict(),
  )
  .max(10_000);

/** The problems of a CORRIDOR_VASP_DIRECTORY text (none: it is a valid directory). */
function vaspDirectoryProblems(text: string): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return ["must be JSON: an array of {vaspName, url}"];
  }
  const entries = vaspEntries.safeParse(parsed);
  if (!entries.success) return entries.error.issues.map((issue) => `${issue.path.join(".") || "value"}: ${issue.message}`);
  const names = new Set<string>();
  const problems: string[] = [];
  for (const v of entries.data) {
    if (names.has(v.vaspName)) problems.push(`vaspName ${JSON.stringify(v.vaspName)} is listed twice`);
    names.add(v.vaspName);
  }
  return problems;
}

/** The directory of a valid CORRIDOR_VASP_DIRECTORY text (unset: empty), sorted by name. */
export function vaspDirectory(text: string | undefined): Vasp[] {
  if (!text) return [];
  return [...vaspEntries.parse(JSON.parse(text))].sort((a, b) => (a.vaspName < b.vaspName ? -1 : a.vaspName > b.vaspName ? 1 : 0));
}

/** CORRIDOR_VASP_DIRECTORY: JSON text of an array of Grid's Vasp objects, checked at start. */
const vaspDirectorySetting = z
  .string()
  .optional()
  .superRefine((text, ctx) => {
    if (text === undefined) return;
    for (const message of vaspDirectoryProblems(text)) ctx.addIssue({ code: "custom", message });
  });

/**
 * The gateway's knobs, wherever a gateway runs: the split gateway (main.ts) and the embedded system
 * (embedded/src/config.ts) spread this same object into their config schema, and buildGateway's
 * defaults are parsed from it. Each knob therefore has exactly one default, here (issue 14, defect 8);
 * the READMEs' environment tables repeat these values and a test checks that they do.
 */
export const gatewayEnv = {
  /** Requests allowed per authenticated principal (API token, or agent) per window; per client IP on routes without authentication. */
  RATE_LIMIT_MAX: z.coerce.number().int().min(1).default(1000),
  /** Rate-limit window in milliseconds. */
  RATE_LIMIT_WINDOW_MS: z.coerce.number().int().min(1).default(60_000),
  /** Failed authentications allowed per (client IP, claimed clientId) per window; beyond, failures answer 429. A correct secret always passes. */
  AUTH_FAILURE_LIMIT_MAX: z.coerce.number().int().min(1).default(20),
  /** Window of the failed-authentication throttle in milliseconds. */
  AUTH_FAILURE_WINDOW_MS: z.coerce.number().int().min(1).default(60_000),
  /** How long a verified credential is trusted without asking auth-sessions, in milliseconds. */
  AUTH_CACHE_TTL_MS: z.coerce.number().int().min(0).default(30_000),
  /** Trust X-Forwarded-For from the proxy in front, for client IPs (per-IP limits, the failure throttle). */
  TRUST_PROXY: env.bool(false),
  /** A client must send a request's complete headers within this many ms of connecting, or gets 408 and a closed connection (slowloris). */
  HTTP_HEADERS_TIMEOUT_MS: z.coerce.number().int().min(1000).default(15_000),
  /** A client must send a whole request (headers and body) within this many ms, or gets 408 and a closed connection (slow bodies). */
  HTTP_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(1000).default(30_000),
  /** How long a request answered by the gateway's idempotency record (docs/idempotency.md) holds its Idempotency-Key before it answers; past it (a gateway that died mid-request), a retry with the same key runs again. Longer than any request runs. */
  IDEMPOTENCY_LEASE_MS: z.coerce.number().int().min(1000).default(120_000),
  /** Where the operator publishes the end-user terms its platforms' customers accept (GET /customers/end-user-terms, an https URL); unset: that route answers 404 END_USER_TERMS_NOT_CONFIGURED. */
  CORRIDOR_END_USER_TERMS_URL: z
    .string()
    .url()
    .refine((u) => u.startsWith("https://"), "must be an https URL")
    .optional(),
  /** The version of those terms GET /customers/end-user-terms names. */
  CORRIDOR_END_USER_TERMS_VERSION: z.string().min(1).max(64).default("1"),
  /** The VASP directory GET /vasps answers: a JSON array of {"vaspName", "url"} (https), names unique; unset: an empty directory. */
  CORRIDOR_VASP_DIRECTORY: vaspDirectorySetting,
};

export const gatewayConfigSchema = z.object(gatewayEnv);
export type GatewayConfig = z.infer<typeof gatewayConfigSchema>;

/** The split (and cluster) gateway process: main.ts. */
export const splitGatewayConfigSchema = z.object({
  /** Port of the REST API. */
  PORT: env.port(8080),
  /** Interface to listen on. */
  HOST: z.string().default("0.0.0.0"),
  /** Port of the Prometheus scrape endpoint `/metrics`; unset = none (docs/operations.md, "Metrics"). */
  METRICS_PORT: metricsPortSetting,
  /** Redis for shared rate-limit counters, the auth cache and Idempotency-Key claims; in-process when unset (single replica only). */
  REDIS_URL: z.string().optional(),
  ...gatewayEnv,
  /** What a platform's webhookEndpoint may be (PATCH /config): the kit's one definition, shared with auth-sessions and notifications. */
  ...webhookTargetEnv,
  /**
   * After SIGTERM, how long to keep serving (with /readyz failing) before closing, so the load
   * balancer stops routing here first. 0 locally; the Helm chart sets a few seconds.
   */
  SHUTDOWN_DRAIN_DELAY_MS: env.int(0),
  /** Where each service answers (Connect over h2c): one base URL, or its replicas' comma-separated. */
  ...serviceUrlSettings(),
});

/** Every knob at its default: what buildGateway uses for an option it is not given. */
export const GATEWAY_DEFAULTS: GatewayConfig = Object.freeze(gatewayConfigSchema.parse({}));

/** The buildGateway options a loaded config sets. */
export interface GatewayTuning {
  rateLimit: { max: number; timeWindowMs: number };
  authFailureLimit: { max: number; timeWindowMs: number };
  authCacheTtlMs: number;
  trustProxy: boolean;
  httpTimeouts: { headersMs: number; requestMs: number };
  idempotencyLeaseMs: number;
  webhookTargets: WebhookTargetSettings;
  /** The operator's end-user terms, when it publishes some. */
  endUserTerms?: { url: string; version: string };
  /** The operator's VASP directory (GET /vasps), sorted by name. */
  vasps: readonly Vasp[];
}

export function gatewayTuning(config: GatewayConfig & Partial<WebhookTargetSettings>): GatewayTuning {
  return {
    webhookTargets: {
      CORRIDOR_WEBHOOK_ALLOW_LOOPBACK: config.CORRIDOR_WEBHOOK_ALLOW_LOOPBACK ?? WEBHOOK_TARGET_DEFAULTS.CORRIDOR_WEBHOOK_ALLOW_LOOPBACK,
      CORRIDOR_WEBHOOK_ALLOWED_RANGES: config.CORRIDOR_WEBHOOK_ALLOWED_RANGES ?? WEBHOOK_TARGET_DEFAULTS.CORRIDOR_WEBHOOK_ALLOWED_RANGES,
    },
    rateLimit: { max: config.RATE_LIMIT_MAX, timeWindowMs: config.RATE_LIMIT_WINDOW_MS },
    authFailureLimit: { max: config.AUTH_FAILURE_LIMIT_MAX, timeWindowMs: config.AUTH_FAILURE_WINDOW_MS },
    authCacheTtlMs: config.AUTH_CACHE_TTL_MS,
    trustProxy: config.TRUST_PROXY,
    httpTimeouts: { headersMs: config.HTTP_HEADERS_TIMEOUT_MS, requestMs: config.HTTP_REQUEST_TIMEOUT_MS },
    idempotencyLeaseMs: config.IDEMPOTENCY_LEASE_MS,
    vasps: vaspDirectory(config.CORRIDOR_VASP_DIRECTORY),
    ...(config.CORRIDOR_END_USER_TERMS_URL ? { endUserTerms: { url: config.CORRIDOR_END_USER_TERMS_URL, version: config.CORRIDOR_END_USER_TERMS_VERSION } } : {}),
  };
}
