import { v7 as uuidv7 } from "uuid";
import { newId, type Clock } from "@corridor/kit";
import { outcomeFields, type DeliveryAttempt, type DeliveryStore, type WebhookSender } from "./delivery.js";
import { ensureSettings, signingSecrets, type SettingsStore } from "./settings.js";
import { eventTypeFor } from "./grid-webhooks.js";

export const INCOMING_PAYMENT_PENDING = "INCOMING_PAYMENT_PENDING";

export type ApprovalReply = "APPROVED" | "ACKNOWLEDGED" | "ERROR" | "NO_ENDPOINT";

export interface ApprovalAnswer {
  reply: ApprovalReply;
  receiverCustomerInfo?: Record<string, unknown>;
  attempt?: DeliveryAttempt;
}

/** receiverCustomerInfo of a 200 reply, when its body is a JSON object carrying one. */
export function receiverInfoOf(body: string | undefined): Record<string, unknown> | undefined {
  if (!body) return undefined;
  try {
    const parsed = JSON.parse(body) as unknown;
    const info = parsed && typeof parsed === "object" ? (parsed as Record<string, unknown>).receiverCustomerInfo : undefined;
    return info && typeof info === "object" && !Array.isArray(info) ? (info as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** decisions §8: 200 approves, 202 acknowledges, anything else (or no reply) is an error. */
export function classifyReply(outcome: { status: number } | { error: string }): ApprovalReply {
  if (!("status" in outcome)) return "ERROR";
  if (outcome.status === 200) return "APPROVED";
  if (outcome.status === 202) return "ACKNOWLEDGED";
  return "ERROR";
}

/**
 * Posts INCOMING_PAYMENT_PENDING once and waits for the reply (the sender's timeout bounds the
 * wait). Never retried: the caller turns an error into a FAILED payment. The attempt is recorded.
 */
export async function requestIncomingPaymentApproval(
  deps: { settings: SettingsStore; deliveries: DeliveryStore; sender: WebhookSender; clock: Clock },
  platformId: string,
  data: Record<string, unknown>,
): Promise<ApprovalAnswer> {
  const now = deps.clock.now();
  const settings = await ensureSettings(deps.settings, platformId, now);
  if (!settings.webhookEndpoint) return { reply: "NO_ENDPOINT" };
  const webhookId = newId("Webhook");
  const body = JSON.stringify({ id: webhookId, type: eventTypeFor(settings.webhookEventNaming, INCOMING_PAYMENT_PENDING), timestamp: now.toISOString(), data });
  const outcome = await deps.sender.send(
    { platformId, url: settings.webhookEndpoint, webhookId, timestamp: now, body, secrets: signingSecrets(settings, now) },
    { readBody: true },
  );
  const reply = classifyReply(outcome);
  const attempt: DeliveryAttempt = {
    id: uuidv7(),
    platformId,
    webhookId,
    type: INCOMING_PAYMENT_PENDING,
    url: settings.webhookEndpoint,
    requestBody: body,
    ...outcomeFields(outcome),
    delivered: reply === "APPROVED" || reply === "ACKNOWLEDGED",
    attemptedAt: now,
  };
  await deps.deliveries.record(attempt);
  const info = reply === "APPROVED" && "status" in outcome ? receiverInfoOf(outcome.body) : undefined;
  return { reply, attempt, ...(info ? { receiverCustomerInfo: info } : {}) };
}
