import { AppError, errors, requestHash, type Clock } from "@corridor/kit";
import type { IdempotencyKeys, IdempotencyRef, StoreTx } from "./ports.js";

/** Completes the claimed key inside the effect's transaction, with what a replay needs. */
export type Complete = (tx: StoreTx, body: unknown) => Promise<void>;

export type Idempotent = <T>(
  opts: { platformId: string; agentId: string; key: string; request: unknown },
  effect: (complete: Complete) => Promise<T>,
  replay: (body: any) => Promise<T>,
) => Promise<{ value: T; replayed: boolean }>;

/** An agent's keys live in its own space of the platform's keys (docs/agents.md). */
export const agentKey = (agentId: string, key: string) => `agent/${agentId}/${key}`;

/**
 * Decisions §3 for agent submissions: the key is claimed in its own statement (a concurrent
 * duplicate sees it at once: 409), the effect's first transaction completes it together with the
 * action it records, and an effect that fails before that releases it so a retry may run. A
 * replay answers what the first request created (as it is now), never runs the effect again.
 */
export function idempotencyRunner(keys: IdempotencyKeys, clock: Clock): Idempotent {
  return async (opts, effect, replay) => {
    if (!opts.key) return { value: await effect(async () => {}), replayed: false };
    if (!/^[\x20-\x7E]{1,255}$/.test(opts.key)) throw errors.invalidInput([{ field: "Idempotency-Key", reason: "must be 1 to 255 printable ASCII characters" }]);
    const ref: IdempotencyRef = { platformId: opts.platformId, key: agentKey(opts.agentId, opts.key), requestHash: requestHash(opts.request) };
    const claim = await keys.claim(ref, clock.now());
    if (claim.kind === "replay") return { value: await replay(claim.body), replayed: true };
    if (claim.kind === "conflict") {
      throw new AppError("UNPROCESSABLE", "IDEMPOTENCY_KEY_REUSED", "This Idempotency-Key was used with a different request body", { idempotencyKey: opts.key });
    }
    if (claim.kind === "in_flight") {
      throw new AppError("CONFLICT", "IDEMPOTENCY_KEY_IN_USE", "A request with this Idempotency-Key is still being processed; retry later", { idempotencyKey: opts.key }, { shouldNotRetry: false });
    }
    try {
      return { value: await effect((tx, body) => tx.completeIdempotencyKey(ref, body)), replayed: false };
    } catch (err) {
      // Only an in_flight key is deleted: once the effect's transaction completed it, it stays.
      await keys.release(ref).catch(() => undefined);
      throw err;
    }
  };
}
