import { createGuardedHttpClient, type HostResolver, type TargetEnvironment, type WebhookTargetSettings } from "@corridor/kit";
import { Webhook } from "standardwebhooks";
import type { OutgoingWebhook, SendOutcome, WebhookSender } from "../domain/delivery.js";
import { RESPONSE_EXCERPT_CHARS } from "../domain/ports.js";
import { GRID_SIGNATURE_HEADER, gridSignature, type SigningKey } from "../domain/grid-webhooks.js";

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

/** A platform's environment, which decides what its endpoint may be (kit address-safety). */
export type EnvironmentOf = (platformId: string) => Promise<TargetEnvironment>;

/** Bytes of an answer read for its excerpt: enough for RESPONSE_EXCERPT_CHARS characters of UTF-8. */
export const EXCERPT_READ_BYTES = RESPONSE_EXCERPT_CHARS * 4;
/** Bytes of an answer read when the caller needs the body (the incoming-payment approval's receiverCustomerInfo). */
export const BODY_READ_BYTES = 64 * 1024;

/**
 * Posts through the kit's guarded client: the endpoint is checked against its platform's policy
 * (production: https to public addresses only; sandbox: loopback too while the operator allows
 * it) before connecting and again for every address its name resolves to, and the connection goes
 * to an address that was checked. Redirects are not followed (a 3xx is not a delivery); at most
 * EXCERPT_READ_BYTES of an answer are read (BODY_READ_BYTES when the body is asked for), within
 * the deadline. A failure is recorded as its category's message (connection failed, DNS lookup
 * failed, target refused: <rule>, …), never a socket error's details. When the platform's
 * environment cannot be learnt the strictest policy (production's) applies.
 */
export function createHttpSender(opts: {
  timeoutMs: number;
  environmentOf: EnvironmentOf;
  settings?: WebhookTargetSettings;
  resolve?: HostResolver;
  userAgent?: string;
  /** The deployment's key: every POST also carries X-Grid-Signature, its signature of the exact body. */
  signingKey: () => Promise<SigningKey>;
}): WebhookSender & { close(): void } {
  const client = createGuardedHttpClient({ settings: opts.settings, resolve: opts.resolve, userAgent: opts.userAgent ?? "Corridor-Webhooks/1" });
  return {
    async send(webhook: OutgoingWebhook, sendOpts?: { readBody?: boolean }): Promise<SendOutcome> {
      const environment = await opts.environmentOf(webhook.platformId).catch((): TargetEnvironment => "PRODUCTION");
      let key: SigningKey;
      try {
        key = await opts.signingKey();
      } catch {
        // The stored key could not be read (its database is unavailable): nothing is sent unsigned.
        return { error: "webhook signing key unavailable" };
      }
      const gridHeader = { [GRID_SIGNATURE_HEADER]: gridSignature(webhook.body, key) };
      const res = await client.request({
        url: webhook.url,
        environment,
        method: "POST",
        headers: { "content-type": "application/json", ...signatureHeaders(webhook), ...gridHeader },
        body: webhook.body,
        timeoutMs: opts.timeoutMs,
        maxBodyBytes: sendOpts?.readBody ? BODY_READ_BYTES : EXCERPT_READ_BYTES,
      });
      if (!res.ok) return { error: res.message, latencyMs: res.latencyMs };
      const text = new TextDecoder().decode(res.body);
      const excerpt = text.slice(0, RESPONSE_EXCERPT_CHARS);
      return sendOpts?.readBody ? { status: res.status, body: text, excerpt, latencyMs: res.latencyMs } : { status: res.status, excerpt, latencyMs: res.latencyMs };
    },
    close: () => client.close(),
  };
}
