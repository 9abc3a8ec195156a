import type { Clock, Logger } from "@corridor/kit";
import type { Hydrator } from "./hydration.js";
import type { PlatformTime, Store } from "./ports.js";
import { failAction } from "./transitions.js";

/**
 * A PENDING_APPROVAL quote execution expires with its quote (docs/agents.md): FAILED
 * QUOTE_EXPIRED, reservation back. Expiry is on each platform's clock, so the pass reads the clock
 * of every platform that has such actions, then fails the due ones one short transaction each.
 */
export function createExpiry(deps: { store: Store; time: PlatformTime; clock: Clock; hydrator: Hydrator; log: Pick<Logger, "warn"> }) {
  return {
    /** One pass; answers how many actions it failed. */
    async expireDue(limit: number): Promise<number> {
      let expired = 0;
      // Sandbox clocks run ahead of real time by any amount, so every platform with a pending quote
      // execution is looked at on its own clock.
      for (const platformId of await deps.store.platformsWithExpiringActions()) {
        try {
          const now = await deps.time.now(platformId);
          for (const due of await deps.store.expiredPendingActions(platformId, now, limit)) {
            const seen = await deps.hydrator.hydrate(due, { quote: true, transaction: false });
            const done = await deps.store.transaction(async (tx) => {
              await tx.lockAgent(platformId, due.agentId);
              const a = await tx.lockAction(platformId, due.id);
              if (!a || a.status !== "PENDING_APPROVAL" || !a.expiresAt || a.expiresAt > now) return false;
              await failAction(tx, a, "QUOTE_EXPIRED", `The quote expired at ${a.expiresAt.toISOString()} before the action was approved`, deps.clock.now(), {
                quoteSnapshot: seen.quoteSnapshot,
              });
              return true;
            });
            if (done) expired++;
          }
        } catch (err) {
          deps.log.warn({ err, platformId }, "could not expire this platform's pending quote executions; next pass retries");
        }
      }
      return expired;
    },
  };
}

export type Expiry = ReturnType<typeof createExpiry>;
