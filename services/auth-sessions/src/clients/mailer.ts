import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { AppError } from "@corridor/kit";
import type { Transporter } from "nodemailer";
import type { Mailer } from "../domain/wallet/ports.js";

export interface MailerOptions {
  smtpUrl?: string;
  from: string;
  /** Never send without TLS: STARTTLS must be offered and succeed (smtps:// is TLS from the start). */
  requireTls?: boolean;
  /** PEM of the CA the server's certificate must chain to (a private mail server). */
  caPem?: string;
  /** Attempts per code (1 = no retry). */
  attempts?: number;
  /** Pause before the first retry, ms, doubled for each next one. */
  retryMs?: number;
  log: { warn(obj: object, msg: string): void };
}

/** What the mail server said, without anything of the message (the code is in its body). */
interface SmtpFailure {
  code?: string;
  responseCode?: number;
  command?: string;
}

/**
 * A failure worth another attempt: the server could not be reached or answered a transient 4xx
 * (greylisting, full queue, rate limit). A 5xx is permanent: the same mail would be refused again.
 */
const transient = (e: SmtpFailure) => e.responseCode === undefined || (e.responseCode >= 400 && e.responseCode < 500);
/**
 * The server refused this address or this message for good (a 5xx to RCPT TO or DATA): the
 * caller's input, not the deployment. A 5xx anywhere else (STARTTLS required but not offered,
 * authentication) is the operator's to fix.
 */
const undeliverable = (e: SmtpFailure) => (e.code === "EENVELOPE" || e.code === "EMESSAGE") && (e.responseCode ?? 0) >= 500;

/**
 * OTP mail. With CORRIDOR_SMTP_URL: SMTP (nodemailer), for every platform: STARTTLS whenever the
 * server offers it (required with CORRIDOR_SMTP_REQUIRE_TLS), certificates checked against the
 * system's CAs or CORRIDOR_SMTP_CA_FILE, transient failures retried with back-off, then 503
 * EMAIL_DELIVERY_FAILED (Retry-After); a 5xx refusal of the address is 400 EMAIL_UNDELIVERABLE.
 * The log gets the server's reply codes, never the message. Without CORRIDOR_SMTP_URL: the
 * **development mailer**, for sandbox platforms only — it writes the code to the log, in a record
 * clearly marked as such (`developmentMailer: true`, level warn) — and production platforms get no
 * mail at all: `deliversTo("PRODUCTION")` is false, so the domain answers 400
 * EMAIL_DELIVERY_NOT_CONFIGURED before any code is drawn. A production code is never logged: the
 * development mailer refuses one outright.
 */
export function createMailer(opts: MailerOptions): Mailer {
  // nodemailer (~60 modules) is loaded only where a mail server is configured: not by the
  // development mailer of a default `npm start` (issue 28, item 4: a warm start in 3 s).
  const transport: Promise<Transporter> | undefined = opts.smtpUrl
    ? import("nodemailer").then(({ default: nodemailer }) => nodemailer.createTransport({
        // The URL gives host, port, credentials and smtps://; the options below add to it.
        url: opts.smtpUrl,
        requireTLS: opts.requireTls ?? false,
        tls: { rejectUnauthorized: true, ...(opts.caPem ? { ca: opts.caPem } : {}) },
        // No connection pool: one short session per code, nothing held open between codes.
        connectionTimeout: 10_000,
        greetingTimeout: 10_000,
        socketTimeout: 20_000,
      }))
    : undefined;
  // Awaited by each delivery; a failure to load is that delivery's error, not an unhandled rejection.
  transport?.catch(() => undefined);
  const attempts = opts.attempts ?? 3;
  const retryMs = opts.retryMs ?? 250;
  return {
    deliversTo(environment) {
      return transport !== undefined || environment === "SANDBOX";
    },
    async sendOtp(to, code, ctx) {
      if (!transport) {
        if (ctx.environment !== "SANDBOX") throw new Error("no mail server: an EMAIL_OTP code of a production platform is never written to the log");
        opts.log.warn(
          { developmentMailer: true, to, developmentOtpCode: code, platformId: ctx.platformId, credentialId: ctx.credentialId },
          "DEVELOPMENT MAILER (no CORRIDOR_SMTP_URL; sandbox platforms only): EMAIL_OTP code written here instead of mailed",
        );
        return;
      }
      await deliver(transport, to, code, ctx);
    },
    async sendContactCode(to, code, ctx) {
      // Never the development mailer: a contact-verification code is never written to a log.
      // Without a mail server a sandbox platform's code goes nowhere (its magic code confirms).
      if (!transport) {
        if (ctx.environment !== "SANDBOX") throw new AppError("INVALID", "EMAIL_DELIVERY_NOT_CONFIGURED", "This deployment has no mail server (CORRIDOR_SMTP_URL), so verification codes cannot reach production customers", { channel: "EMAIL" });
        return false;
      }
      await deliver(transport, to, code, { platformId: ctx.platformId, credentialId: ctx.customerId });
      return true;
    },
  };

  /** One code mail, retried on transient failures; the log gets the server's reply codes, never the message. */
  async function deliver(transporter: Promise<Transporter>, to: string, code: string, ctx: { platformId: string; credentialId: string }): Promise<void> {
      const transport = await transporter;
      for (let attempt = 1; ; attempt++) {
        try {
          await transport.sendMail({
            from: opts.from,
            to,
            subject: "Your verification code",
            text: `Your verification code is ${code}. It expires in 5 minutes.`,
          });
          return;
        } catch (err) {
          const e = err as SmtpFailure;
          const reply = { smtpError: e.code, responseCode: e.responseCode, command: e.command, attempt, platformId: ctx.platformId, credentialId: ctx.credentialId };
          if (undeliverable(e)) {
            opts.log.warn(reply, "the mail server refused an EMAIL_OTP mail for good");
            throw new AppError("INVALID", "EMAIL_UNDELIVERABLE", "The mail server refused to deliver the verification code to this address", { credentialType: "EMAIL_OTP", responseCode: e.responseCode ?? 0 });
          }
          if (!transient(e) || attempt >= attempts) {
            opts.log.warn(reply, "an EMAIL_OTP mail could not be handed to the mail server; the request answers 503");
            throw new AppError("UNAVAILABLE", "EMAIL_DELIVERY_FAILED", "The verification code could not be handed to the mail server; nothing was changed, retry later", { credentialType: "EMAIL_OTP" });
          }
          await sleep(retryMs * 2 ** (attempt - 1));
        }
      }
  }
}

/** The CA file's PEM, read once at start (a bad path fails the start, naming the setting). */
export function readSmtpCa(path: string | undefined): string | undefined {
  return readCaFile("CORRIDOR_SMTP_CA_FILE", path);
}

/** A CA file the operator named in a setting, read at start: a missing file stops the start and says which setting. */
export function readCaFile(setting: string, path: string | undefined): string | undefined {
  if (!path) return undefined;
  try {
    return readFileSync(path, "utf8");
  } catch (err) {
    throw new Error(`${setting} ${path} cannot be read: ${(err as Error).message}`);
  }
}
