import { env, loadConfig, z } from "@corridor/kit";

/** The sandbox's settings (also the sandbox connector's: src/connector.ts). */
export const sandboxConfigSchema = z.object({
  /** How often the `sandbox-schedule` worker looks for scheduled outcomes now due. */
  SANDBOX_SCHEDULE_POLL_MS: env.int(1000).pipe(z.number().int().min(1).max(600_000)),
  /** How long the worker rests while nothing is scheduled (an action scheduled here wakes it); never shorter than the poll. */
  SANDBOX_SCHEDULE_IDLE_POLL_MS: env.int(10_000).pipe(z.number().int().min(1).max(600_000)),
});

export type SandboxConfig = z.infer<typeof sandboxConfigSchema>;

export function loadSandboxConfig(source: NodeJS.ProcessEnv): SandboxConfig {
  return loadConfig(sandboxConfigSchema, source);
}
