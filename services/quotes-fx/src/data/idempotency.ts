import { completeIdempotencyKey, createIdempotencyRunner, idempotencyKeyStore, type Clock } from "@corridor/kit";
import type { Kysely, Transaction } from "kysely";
import type { Idempotent } from "../domain/ports.js";

/**
 * Decisions §3 over the kit's idempotency_keys table, through the kit's idempotency runner: the
 * key is claimed in its own statement (a concurrent duplicate sees it at once: 409), the effect's
 * transaction completes it (effect and stored answer commit together), a failed effect releases it
 * so a retry may run.
 */
export function idempotencyRunner(db: Kysely<any>, clock: Clock): Idempotent {
  const run = createIdempotencyRunner(idempotencyKeyStore(db), clock);
  return (opts, effect) =>
    run(
      { platformId: opts.platformId, key: opts.key, request: opts.request },
      (ref) =>
        effect(async (trx, v) => {
          if (ref) await completeIdempotencyKey(trx as Transaction<any>, { ...ref, status: opts.status, body: opts.encode(v) });
        }),
      (stored) => opts.decode(stored.body),
    );
}
