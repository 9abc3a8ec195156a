import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";

/**
 * A local SMTP catcher for end-to-end tests: the system under test is pointed at it with
 * CORRIDOR_SMTP_URL, and tests read the mails it received (for example the EMAIL_OTP code).
 * smtp-server answers DATA only after onData's callback, which runs once the mail is stored, so a
 * mail is readable as soon as the API call that sent it has answered: tests need not poll.
 */

export interface CapturedMail {
  /** Envelope recipients (RCPT TO), lower case. */
  to: string[];
  /** Envelope sender (MAIL FROM). */
  from: string;
  /** The whole message as received (headers and body). */
  raw: string;
}

/** Where tests read captured mails: the catcher itself, or its HTTP view from another process. */
export interface Mailbox {
  /** Every mail received for `address` so far, oldest first. */
  mailsTo(address: string): Promise<CapturedMail[]>;
}

export interface MailCatcher extends Mailbox {
  /** smtp://127.0.0.1:<port>, the value for CORRIDOR_SMTP_URL. */
  smtpUrl: string;
  mails: CapturedMail[];
  close(): Promise<void>;
}

export async function startMailCatcher(): Promise<MailCatcher> {
  const mails: CapturedMail[] = [];
  const server = new SMTPServer({
    // Loopback only: plain SMTP, no AUTH, no STARTTLS offered (nodemailer then sends in clear).
    disabledCommands: ["AUTH", "STARTTLS"],
    authOptional: true,
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("error", callback);
      stream.on("end", () => {
        mails.push({
          to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
          raw: Buffer.concat(chunks).toString("utf8"),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.server.address() as AddressInfo;
  return {
    smtpUrl: `smtp://127.0.0.1:${port}`,
    mails,
    async mailsTo(address) {
      return mails.filter((m) => m.to.includes(address.toLowerCase()));
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * Serves a catcher's mails on loopback HTTP (`GET /mails?to=<address>` → JSON array) for test
 * workers, which run in other processes than the global setup that owns the catcher.
 */
export async function serveMailbox(catcher: MailCatcher): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (req.method !== "GET" || url.pathname !== "/mails") {
      res.writeHead(404).end();
      return;
    }
    const to = url.searchParams.get("to");
    void (to ? catcher.mailsTo(to) : Promise.resolve(catcher.mails)).then((list) => {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(list));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A Mailbox read over serveMailbox's HTTP endpoint. */
export function remoteMailbox(url: string): Mailbox {
  return {
    async mailsTo(address) {
      const res = await fetch(`${url}/mails?to=${encodeURIComponent(address)}`);
      if (!res.ok) throw new Error(`mailbox answered ${res.status}`);
      return (await res.json()) as CapturedMail[];
    },
  };
}

/**
 * The 6-digit code of an OTP mail ("Your verification code is 123456."). The text part is short
 * ASCII, sent 7bit or quoted-printable, so the digits appear as they are in the raw message.
 */
export function otpCodeOf(mail: CapturedMail): string {
  const match = /verification code is (\d{6})\b/.exec(mail.raw);
  if (!match) throw new Error(`no verification code in mail:\n${mail.raw}`);
  return match[1]!;
}
