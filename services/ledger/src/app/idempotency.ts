import { fromJson, toJson, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import {
  AppError,
  claimIdempotencyKey,
  completeIdempotencyKey,
  releaseIdempotencyKey,
  requestHash,
  type Clock,
} from "@corridor/kit";
import type { Kysely, Transaction } from "kysely";

/**
 * Decisions §3 around one money-moving effect: the key is claimed in its own statement (so a
 * concurrent duplicate sees it at once and gets 409), the effect's transaction completes it (the
 * effect and the stored answer commit together), and a failed effect releases it for a retry.
 * The stored answer is the proto JSON of the first response.
 */
export function idempotencyRunner(db: Kysely<any>, clock: Clock) {
  return async function run<Desc extends DescMessage>(
    opts: { platformId: string; key: string; request: unknown; status: number; schema: Desc },
    effect: (complete: (trx: Transaction<any>, value: MessageShape<Desc>) => Promise<void>) => Promise<MessageShape<Desc>>,
  ): Promise<{ value: MessageShape<Desc>; replayed: boolean; status: number }> {
    if (!opts.key) return { value: await effect(async () => {}), replayed: false, status: opts.status };
    const ref = { platformId: opts.platformId, key: opts.key, requestHash: requestHash(opts.request) };
    const claim = await claimIdempotencyKey(db, { ...ref, now: clock.now() });
    if (claim.kind === "replay") {
      return { value: fromJson(opts.schema, claim.body as never), replayed: true, status: claim.status };
    }
    if (claim.kind === "conflict") {
      throw new AppError("UNPROCESSABLE", "IDEMPOTENCY_KEY_REUSED", "This Idempotency-Key was used with a different request body", { idempotencyKey: opts.key });
    }
    if (claim.kind === "in_flight") {
      throw new AppError("CONFLICT", "IDEMPOTENCY_KEY_IN_USE", "A request with this Idempotency-Key is still being processed; retry later", { idempotencyKey: opts.key }, { shouldNotRetry: false });
    }
    try {
      const value = await effect((trx, v) => completeIdempotencyKey(trx, { ...ref, status: opts.status, body: toJson(opts.schema, v) }));
      return { value, replayed: false, status: opts.status };
    } catch (err) {
      await releaseIdempotencyKey(db, ref).catch(() => undefined);
      throw err;
    }
  };
}
