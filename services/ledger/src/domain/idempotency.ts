import { createIdempotencyRunner, type Clock, type IdempotencyKeyStore } from "@corridor/kit";
import type { Answer, AnswerCodec, LedgerTx } from "./ports.js";

/** Completes the claimed key inside the effect's transaction with the fresh row (encoded for replays). */
export type Complete<Row> = (tx: LedgerTx, row: Row) => Promise<void>;

export type Idempotent = <Row>(
  opts: { platformId: string; key: string; request: unknown; codec: AnswerCodec<Row> },
  effect: (complete: Complete<Row>) => Promise<Row>,
) => Promise<{ value: Answer<Row>; replayed: boolean }>;

/**
 * Decisions §3 around one money-moving effect, on the kit's runner: the key is claimed in its own
 * statement (so a concurrent duplicate sees it at once: CONFLICT IDEMPOTENCY_KEY_IN_USE), the
 * effect's transaction completes it (the effect and the stored answer commit together), a failed
 * effect releases it for a retry. The stored answer is the first response as the codec encodes it
 * (the handlers' proto JSON); a replay hands it back as is.
 */
export function idempotencyRunner(keys: IdempotencyKeyStore, clock: Clock): Idempotent {
  const run = createIdempotencyRunner(keys, clock);
  return (opts, effect) =>
    run<Answer<any>>(
      { platformId: opts.platformId, key: opts.key, request: opts.request },
      async (ref) => {
        const row = await effect(async (tx, r) => {
          if (ref) await tx.completeIdempotencyKey(ref, opts.codec.encode(r));
        });
        return { row };
      },
      (stored) => ({ stored: stored.body }),
    );
}
