import { Webhook } from "standardwebhooks";
import type { OutgoingWebhook, SendOutcome, WebhookSender } from "../domain/delivery.js";

/**
 * The Standard Webhooks headers of a message. Each secret contributes one `v1,<sig>`; receivers
 * accept the message when any of the space-separated signatures verifies with their secret, which
 * is what lets a rotation overlap.
 */
export function signatureHeaders(webhook: Pick<OutgoingWebhook, "webhookId" | "timestamp" | "body" | "secrets">): Record<string, string> {
  const signatures = webhook.secrets.map((s) => new Webhook(s).sign(webhook.webhookId, webhook.timestamp, webhook.body));
  return {
    "webhook-id": webhook.webhookId,
    "webhook-timestamp": String(Math.floor(webhook.timestamp.getTime() / 1000)),
    "webhook-signature": signatures.join(" "),
  };
}

function describe(err: unknown, timeoutMs: number): string {
  if (err instanceof Error) {
    if (err.name === "TimeoutError") return `no answer within ${timeoutMs} ms`;
    // fetch wraps socket errors: the cause names what happened (ECONNREFUSED, ENOTFOUND, ...).
    const cause = (err as Error & { cause?: unknown }).cause;
    if (cause instanceof Error) {
      const code = (cause as Error & { code?: string }).code;
      return `${err.message}: ${code ? `${code} ` : ""}${cause.message}`.trim();
    }
    return err.message;
  }
  return String(err);
}

/** Posts with fetch and a deadline; redirects are not followed (a 3xx is not a delivery). */
export function createHttpSender(opts: { timeoutMs: number; userAgent?: string }): WebhookSender {
  return {
    async send(webhook: OutgoingWebhook, sendOpts?: { readBody?: boolean }): Promise<SendOutcome> {
      try {
        const res = await fetch(webhook.url, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "user-agent": opts.userAgent ?? "Corridor-Webhooks/1",
            ...signatureHeaders(webhook),
          },
          body: webhook.body,
          redirect: "manual",
          signal: AbortSignal.timeout(opts.timeoutMs),
        });
        if (sendOpts?.readBody) {
          const text = await res.text();
          return { status: res.status, body: text.slice(0, 65_536) };
        }
        // The answer's body is not used; drain it so the connection is released.
        await res.body?.cancel().catch(() => undefined);
        return { status: res.status };
      } catch (err) {
        return { error: describe(err, opts.timeoutMs) };
      }
    },
  };
}
