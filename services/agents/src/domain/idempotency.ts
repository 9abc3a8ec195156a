import { createIdempotencyRunner, type Clock } from "@corridor/kit";
import type { IdempotencyKeys, StoreTx } from "./ports.js";

/** Completes the claimed key inside the effect's transaction, with what a replay needs. */
export type Complete = (tx: StoreTx, body: unknown) => Promise<void>;

export type Idempotent = <T>(
  opts: { platformId: string; agentId: string; key: string; request: unknown },
  effect: (complete: Complete) => Promise<T>,
  replay: (body: any) => Promise<T>,
) => Promise<{ value: T; replayed: boolean }>;

/** An agent's keys live in its own space of the platform's keys (docs/agents.md). */
export const agentKeyspace = (agentId: string) => `agent/${agentId}`;

/**
 * Decisions §3 for agent submissions, through the kit's runner: the key is claimed in its own
 * statement (a concurrent duplicate sees it at once: 409), the effect's first transaction completes
 * it together with the action it records, and an effect that fails before that releases it so a
 * retry may run. A replay answers what the first request created (as it is now), never runs the
 * effect again.
 */
export function idempotencyRunner(keys: IdempotencyKeys, clock: Clock): Idempotent {
  const run = createIdempotencyRunner(keys, clock);
  return (opts, effect, replay) =>
    run(
      { platformId: opts.platformId, key: opts.key, namespace: agentKeyspace(opts.agentId), request: opts.request, checkKey: true },
      (ref) => effect(ref ? (tx, body) => tx.completeIdempotencyKey(ref, body) : async () => {}),
      (stored) => replay(stored.body),
    );
}
