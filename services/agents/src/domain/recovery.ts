import type { Clock, Logger } from "@corridor/kit";
import type { Executor } from "./execution.js";
import type { Store } from "./ports.js";

/**
 * Finishes executions whose call went out but whose outcome was never recorded (a crash, an
 * unreachable service): the same idempotent call is made again and its answer recorded. A claim is
 * taken over only when it is older than `staleMs`, so a slow call in flight is not doubled.
 */
export function createRecovery(deps: { store: Store; executor: Executor; clock: Clock; staleMs: number; outcomeRetentionMs: number; log: Pick<Logger, "warn" | "info"> }) {
  return {
    /** One pass; answers how many executions it retried. */
    async recoverStale(limit: number): Promise<number> {
      const now = deps.clock.now();
      let retried = 0;
      for (const a of await deps.store.staleExecutions(new Date(now.getTime() - deps.staleMs), limit)) {
        if (!(await deps.store.reclaimExecution(a, deps.clock.now()))) continue;
        deps.log.info({ actionId: a.id }, "retrying a stale execution");
        await deps.executor.execute(a).catch((err) => deps.log.warn({ err, actionId: a.id }, "retrying the execution failed; next pass retries"));
        retried++;
      }
      await deps.store.pruneEarlyOutcomes(new Date(now.getTime() - deps.outcomeRetentionMs));
      return retried;
    },
  };
}

export type Recovery = ReturnType<typeof createRecovery>;
