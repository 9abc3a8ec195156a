import { trace } from "@opentelemetry/api";
import { pino, type DestinationStream, type Logger } from "pino";

export type { Logger };

/**
 * Fields that hold a secret wherever they appear in a log record: their value is replaced by
 * "[REDACTED]" (pino redaction, one level of nesting for `*.`). Request logs carry no headers, but
 * an `Authorization` header logged by mistake is covered too.
 */
export const REDACTED_PATHS: readonly string[] = [
  "req.headers.authorization",
  "req.headers.cookie",
  'req.headers["service-wallet-signature"]',
  'req.headers["grid-wallet-signature"]',
  "headers.authorization",
  "headers.cookie",
  "authorization",
  ...["clientSecret", "client_secret", "secret", "secrets", "otp", "otpCode", "accessToken", "access_token", "livenessAccessToken", "verificationLink", "password", "encryptedSessionSigningKey", "encryptedWalletCredentials", "sessionKey", "privateKey", "walletKey", "webhookSecret", "signingSecret"].flatMap((k) => [k, `*.${k}`]),
];

/**
 * Secrets recognisable by their shape, scrubbed from every line written (messages, error messages
 * and stacks, URLs): webhook secrets `whsec_…`, agent access tokens `agt_…`, Basic/Bearer
 * credentials, device codes, KYC-link and liveness-page tokens in URL paths, secret-looking query parameters and passwords inside
 * connection URLs. Client secrets, OTP codes and keys have no shape; they are never put in a log
 * (and the field names above catch them where they are).
 */
const SCRUBBERS: [RegExp, string][] = [
  [/whsec_[A-Za-z0-9+/=_-]{4,}/g, "whsec_[REDACTED]"],
  [/agt_[A-Za-z0-9_-]{4,}/g, "agt_[REDACTED]"],
  [/\b(Basic|Bearer)(\s+|%20)[A-Za-z0-9+/=._~-]{16,}/gi, "$1 [REDACTED]"],
  [/(\/device-codes\/)[^/?#"\s\\]+/g, "$1[REDACTED]"],
  // A hosted KYC link's token is the link's whole credential (gateway /kyc/{token}).
  [/(\/kyc\/)[^/?#"\s\\]+/g, "$1[REDACTED]"],
  // So is a hosted liveness page's (gateway /liveness/{token}, an SCA factor reset's check).
  [/(\/liveness\/)[^/?#"\s\\]+/g, "$1[REDACTED]"],
  [/([?&](?:token|access_token|client_secret|secret|otp|code|password)=)[^&#"\s\\]+/gi, "$1[REDACTED]"],
  [/(\b[a-z][a-z0-9+.-]*:\/\/[^:/?#@"\s\\]*:)[^@/?#"\s\\]+@/gi, "$1[REDACTED]@"],
];

/** A serialized log line with every shaped secret (see SCRUBBERS) replaced. */
export function scrubSecrets(line: string): string {
  let out = line;
  for (const [pattern, replacement] of SCRUBBERS) out = out.replace(pattern, replacement);
  return out;
}

/**
 * JSON logs on stdout (or `destination`), one line per record, carrying the active trace and span
 * ids so a log line can be found from a trace and back. Secrets are redacted (REDACTED_PATHS,
 * scrubSecrets) before a line is written.
 */
export function createLogger(service: string, level = process.env.LOG_LEVEL ?? "info", destination?: DestinationStream): Logger {
  return createBaseLogger({ service }, level, destination);
}

/**
 * The logger of a process that hosts several services (embedded mode): records carry
 * `process`, and each hosted service's child adds its own `service` (pino does not replace a
 * binding a child repeats, it writes the key twice).
 */
export function createProcessLogger(processName: string, level = process.env.LOG_LEVEL ?? "info", destination?: DestinationStream): Logger {
  return createBaseLogger({ process: processName }, level, destination);
}

/** Binds `service` to a logger unless it already names that service. */
export function serviceLogger(log: Logger, service: string): Logger {
  return log.bindings().service === service ? log : log.child({ service });
}

function createBaseLogger(base: Record<string, string>, level: string, destination?: DestinationStream): Logger {
  const options = {
    level,
    base,
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: [...REDACTED_PATHS], censor: "[REDACTED]" },
    hooks: { streamWrite: scrubSecrets },
    mixin() {
      const span = trace.getActiveSpan();
      if (!span) return {};
      const ctx = span.spanContext();
      return { trace_id: ctx.traceId, span_id: ctx.spanId };
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
