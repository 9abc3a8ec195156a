import nodemailer from "nodemailer";
import type { Mailer } from "../domain/wallet/ports.js";

/**
 * OTP mail. With CORRIDOR_SMTP_URL: SMTP (nodemailer), for every platform. Without: the
 * **development mailer**, for sandbox platforms only — it writes the code to the log, in a record
 * clearly marked as such (`developmentMailer: true`, level warn) — and production platforms get no
 * mail at all: `deliversTo("PRODUCTION")` is false, so the domain answers 501
 * EMAIL_DELIVERY_NOT_CONFIGURED before any code is drawn. A production code is never logged: the
 * development mailer refuses one outright.
 */
export function createMailer(opts: { smtpUrl?: string; from: string; log: { warn(obj: object, msg: string): void } }): Mailer {
  const transport = opts.smtpUrl ? nodemailer.createTransport(opts.smtpUrl) : undefined;
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
      await transport.sendMail({
        from: opts.from,
        to,
        subject: "Your verification code",
        text: `Your verification code is ${code}. It expires in 5 minutes.`,
      });
    },
  };
}
