import { env, loadConfig, webhookTargetEnv, z } from "@corridor/kit";
import { signingKeyProblem } from "./domain/grid-webhooks.js";

/** An integer ≥ `min` with a default (env values arrive as strings). */
const atLeast = (min: number, fallback: number) => z.coerce.number().int().min(min).default(fallback);

const schema = z.object({
  /** How long a webhook POST may take before the attempt counts as failed. */
  NOTIFICATIONS_WEBHOOK_TIMEOUT_MS: env.int(10_000),
  /** Safety poll: the longest the delivery worker sleeps when nothing wakes it (enqueues and due retries do). */
  NOTIFICATIONS_DELIVERY_POLL_MS: atLeast(1, 10_000),
  /** Event-webhook POSTs in flight at once in one notifications process. */
  NOTIFICATIONS_DELIVERY_CONCURRENCY: atLeast(1, 64),
  /** Event-webhook POSTs in flight at once to one platform's endpoint, across all processes. */
  NOTIFICATIONS_DELIVERY_PER_ENDPOINT: atLeast(1, 16),
  /** How long a webhook waits behind an undelivered earlier webhook of the same resource. */
  NOTIFICATIONS_ORDER_HOLD_MS: atLeast(0, 3_600_000),
  /**
   * The deployment's webhook signing key (X-Grid-Signature): a PEM P-256 private key (`\n` escapes
   * are read as newlines; `_FILE` for a mounted secret). Unset: one is generated once and kept in
   * the service's schema (docs/events.md, "X-Grid-Signature"). Never logged.
   */
  CORRIDOR_WEBHOOK_SIGNING_KEY: z
    .string()
    .optional()
    .transform((v) => (v ? v.replace(/\\n/g, "\n") : undefined))
    .superRefine((v, ctx) => {
      const problem = v === undefined ? undefined : signingKeyProblem(v);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    }),
  /** What a webhook endpoint may be (loopback for sandbox platforms; operator-allowed ranges): the kit's one definition. */
  ...webhookTargetEnv,
});

export type NotificationsConfig = z.infer<typeof schema>;

export function loadNotificationsConfig(source: NodeJS.ProcessEnv): NotificationsConfig {
  return loadConfig(schema, source);
}
