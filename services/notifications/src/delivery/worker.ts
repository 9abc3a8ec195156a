import { v7 as uuidv7 } from "uuid";
import type { BackgroundWorker, Clock, Logger } from "@corridor/kit";
import type { Kysely } from "kysely";
import { recordDelivery } from "../data/deliveries-repo.js";
import { leaseDue, settleWebhook, type QueuedWebhook } from "../data/queue-repo.js";
import { findSettings } from "../data/settings-repo.js";
import type { NotificationsDatabase } from "../data/tables.js";
import type { WebhookSender } from "../domain/delivery.js";
import { GIVE_UP_AFTER_MS, judgeAttempt, NO_ENDPOINT_RECHECK_MS } from "../domain/event-webhooks.js";
import { signingSecrets } from "../domain/settings.js";

export interface DeliveryWorkerDeps {
  db: Kysely<NotificationsDatabase>;
  sender: WebhookSender;
  clock: Clock;
  log: Logger;
  pollIntervalMs: number;
  /** How long a picked row stays ours: longer than one POST may take. */
  leaseMs: number;
  batchSize?: number;
}

/** The event-webhook delivery loop; `runOnce` is what each poll does (tests call it directly). */
export interface DeliveryWorker extends BackgroundWorker {
  runOnce(): Promise<number>;
}

export function createDeliveryWorker(deps: DeliveryWorkerDeps): DeliveryWorker {
  const deliverOne = async (row: QueuedWebhook): Promise<void> => {
    const now = deps.clock.now();
    const settings = await findSettings(deps.db, row.platform_id);
    if (!settings?.webhookEndpoint) {
      // Nothing is posted and no attempt recorded: the event waits (like Stripe keeps events) until
      // the platform configures an endpoint, within the same 7-day window as retries.
      const expired = now.getTime() > row.created_at.getTime() + GIVE_UP_AFTER_MS;
      await settleWebhook(deps.db, row.platform_id, row.webhook_id, {
        status: expired ? "FAILED" : "PENDING",
        attempts: row.attempts,
        nextAttemptAt: new Date(now.getTime() + NO_ENDPOINT_RECHECK_MS),
        lastError: expired ? "no webhookEndpoint configured within 7 days" : "no webhookEndpoint configured",
        at: now,
      });
      return;
    }

    // Outside any transaction: the row is ours by its lease.
    const outcome = await deps.sender.send({
      url: settings.webhookEndpoint,
      webhookId: row.webhook_id,
      timestamp: now,
      body: row.payload,
      secrets: signingSecrets(settings, now),
    });
    const done = deps.clock.now();
    const attempts = row.attempts + 1;
    const verdict = judgeAttempt(outcome, attempts, row.created_at, done);
    await deps.db.transaction().execute(async (trx) => {
      await recordDelivery(trx, {
        id: uuidv7(),
        platformId: row.platform_id,
        webhookId: row.webhook_id,
        type: row.type,
        url: settings.webhookEndpoint,
        requestBody: row.payload,
        responseStatus: "status" in outcome ? outcome.status : 0,
        delivered: verdict.status === "DELIVERED",
        error: "error" in outcome ? outcome.error : null,
        attemptedAt: now,
      });
      await settleWebhook(trx, row.platform_id, row.webhook_id, {
        status: verdict.status,
        attempts,
        nextAttemptAt: verdict.status === "PENDING" ? verdict.nextAttemptAt : undefined,
        lastError: verdict.status === "DELIVERED" ? null : verdict.reason,
        at: done,
      });
    });
    if (verdict.status === "FAILED") deps.log.warn({ webhookId: row.webhook_id, platformId: row.platform_id, reason: verdict.reason }, "webhook not delivered");
  };

  const runOnce = async (): Promise<number> => {
    const rows = await leaseDue(deps.db, deps.clock.now(), deps.leaseMs, deps.batchSize ?? 20);
    await Promise.all(
      rows.map((row) =>
        deliverOne(row).catch((err: unknown) => {
          // The lease runs out and the row is picked again: at least once.
          deps.log.error({ err, webhookId: row.webhook_id }, "webhook delivery failed unexpectedly");
        }),
      ),
    );
    return rows.length;
  };

  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;
  let stopped = true;
  const loop = () => {
    if (stopped) return;
    running = runOnce()
      .catch((err: unknown) => deps.log.error({ err }, "webhook delivery poll failed"))
      .finally(() => {
        running = undefined;
        if (!stopped) timer = setTimeout(loop, deps.pollIntervalMs);
      });
  };

  return {
    name: "webhook-delivery",
    runOnce,
    start() {
      if (!stopped) return;
      stopped = false;
      timer = setTimeout(loop, deps.pollIntervalMs);
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
