import { env, loadConfig, z } from "@corridor/kit";

const schema = z.object({
  /** How long a webhook POST may take before the attempt counts as failed. */
  NOTIFICATIONS_WEBHOOK_TIMEOUT_MS: env.int(10_000),
  /** How often the delivery worker looks for due event webhooks. */
  NOTIFICATIONS_DELIVERY_POLL_MS: env.int(1_000),
});

export type NotificationsConfig = z.infer<typeof schema>;

export function loadNotificationsConfig(source: NodeJS.ProcessEnv): NotificationsConfig {
  return loadConfig(schema, source);
}
