import { AppError, claimIdempotencyKey, completeIdempotencyKey, releaseIdempotencyKey, requestHash, type Clock } from "@corridor/kit";
import type { Kysely, Transaction } from "kysely";
import type { Idempotent } from "../domain/ports.js";

/**
 * Decisions §3 over the kit's idempotency_keys table: the key is claimed in its own statement (a
 * concurrent duplicate sees it at once: 409), the effect's transaction completes it (effect and
 * stored answer commit together), a failed effect releases it so a retry may run.
 */
export function idempotencyRunner(db: Kysely<any>, clock: Clock): Idempotent {
  return async (opts, effect) => {
    if (!opts.key) return { value: await effect(async () => {}), replayed: false };
    const ref = { platformId: opts.platformId, key: opts.key, requestHash: requestHash(opts.request) };
    const claim = await claimIdempotencyKey(db, { ...ref, now: clock.now() });
    if (claim.kind === "replay") return { value: opts.decode(claim.body), replayed: true };
    if (claim.kind === "conflict") {
      throw new AppError("UNPROCESSABLE", "IDEMPOTENCY_KEY_REUSED", "This Idempotency-Key was used with a different request body", { idempotencyKey: opts.key });
    }
    if (claim.kind === "in_flight") {
      throw new AppError("CONFLICT", "IDEMPOTENCY_KEY_IN_USE", "A request with this Idempotency-Key is still being processed; retry later", { idempotencyKey: opts.key }, { shouldNotRetry: false });
    }
    try {
      const value = await effect((trx, v) => completeIdempotencyKey(trx as Transaction<any>, { ...ref, status: opts.status, body: opts.encode(v) }));
      return { value, replayed: false };
    } catch (err) {
      await releaseIdempotencyKey(db, ref).catch(() => undefined);
      throw err;
    }
  };
}
