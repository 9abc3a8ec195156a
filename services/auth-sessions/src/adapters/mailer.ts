import nodemailer from "nodemailer";
import type { Mailer } from "../domain/wallet/ports.js";

/**
 * OTP mail: SMTP (nodemailer) when CORRIDOR_SMTP_URL is set, otherwise the code goes to the log
 * (development and sandbox setups without a mail server).
 */
export function createMailer(opts: { smtpUrl?: string; from: string; log: { info(obj: object, msg: string): void } }): Mailer {
  const transport = opts.smtpUrl ? nodemailer.createTransport(opts.smtpUrl) : undefined;
  return {
    async sendOtp(to, code, ctx) {
      if (!transport) {
        opts.log.info({ to, otp: code, ...ctx }, "OTP email (no SMTP configured; logged instead of sent)");
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
