import { env, loadConfig, z } from "@corridor/kit";

const schema = z.object({
  /** How long a device code works after issue, on the platform's clock (decisions §5: 15 minutes). */
  AGENTS_DEVICE_CODE_TTL_SECONDS: env.int(900).pipe(z.number().int().min(60).max(86_400)),
  /** An execution whose call has been out this long without an outcome is retried by the recovery worker. */
  AGENTS_STALE_EXECUTION_MS: env.int(30_000).pipe(z.number().int().min(1_000).max(3_600_000)),
  /** How often the recovery worker looks for stale executions. */
  AGENTS_RECOVERY_POLL_MS: env.int(5_000).pipe(z.number().int().min(50).max(600_000)),
  /** How often the expiry worker fails PENDING_APPROVAL quote executions whose quote expired. */
  AGENTS_EXPIRY_POLL_MS: env.int(5_000).pipe(z.number().int().min(50).max(600_000)),
  /** Actions each worker handles per pass. */
  AGENTS_WORKER_BATCH_SIZE: env.int(50).pipe(z.number().int().min(1).max(1_000)),
  /** How long an early ledger outcome (one that overtook its action's commit) is kept. */
  AGENTS_OUTCOME_RETENTION_HOURS: env.int(168).pipe(z.number().int().min(1).max(8_760)),
});

export type AgentsConfig = z.infer<typeof schema>;

export function loadAgentsConfig(source: NodeJS.ProcessEnv): AgentsConfig {
  return loadConfig(schema, source);
}
