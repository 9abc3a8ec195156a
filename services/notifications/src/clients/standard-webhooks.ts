import { Webhook } from "standardwebhooks";
import type { OutgoingWebhook, SendOutcome, WebhookSender } from "../domain/delivery.js";
import { RESPONSE_EXCERPT_CHARS } from "../domain/ports.js";

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

/**
 * The start of a body, at most `chars` characters: reads only as many bytes as that can take, then
 * cancels the rest (an endpoint answering megabytes costs nothing more).
 */
async function readExcerpt(body: ReadableStream<Uint8Array> | null, chars: number): Promise<string> {
  if (!body) return "";
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let bytes = 0;
  try {
    // A UTF-8 character is at most 4 bytes.
    while (bytes < chars * 4) {
      const { done, value } = await reader.read();
      if (done) break;
      bytes += value.byteLength;
      text += decoder.decode(value, { stream: true });
      if (text.length >= chars) break;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return text.slice(0, chars);
}

/**
 * Posts with fetch and a deadline; redirects are not followed (a 3xx is not a delivery). Each
 * outcome carries the latency (to the answer's headers, or to the failure) and the start of the
 * answer's body.
 */
export function createHttpSender(opts: { timeoutMs: number; userAgent?: string }): WebhookSender {
  return {
    async send(webhook: OutgoingWebhook, sendOpts?: { readBody?: boolean }): Promise<SendOutcome> {
      const started = performance.now();
      const latency = () => Math.round(performance.now() - started);
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
        const latencyMs = latency();
        if (sendOpts?.readBody) {
          const text = await res.text();
          return { status: res.status, body: text.slice(0, 65_536), excerpt: text.slice(0, RESPONSE_EXCERPT_CHARS), latencyMs };
        }
        // Only the start of the answer is kept; the rest is dropped so the connection is released.
        const excerpt = await readExcerpt(res.body, RESPONSE_EXCERPT_CHARS).catch(() => "");
        return { status: res.status, excerpt, latencyMs };
      } catch (err) {
        return { error: describe(err, opts.timeoutMs), latencyMs: latency() };
      }
    },
  };
}
