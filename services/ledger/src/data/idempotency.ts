import { completeIdempotencyKeyAtCommit, type IdempotencyKeyRef } from "@corridor/kit";
import type { Trx } from "./tables.js";

/**
 * Completes a claimed key inside the effect's transaction (the kit's idempotency_keys table of the
 * ledger schema), so the stored answer commits with the money movement: written with the
 * transaction's outbox rows in its last statement (the kit's completeIdempotencyKeyAtCommit). The
 * stored status is no HTTP answer (the gateway decides those): always 200.
 */
export function completeKey(trx: unknown, ref: IdempotencyKeyRef, body: unknown): Promise<void> {
  return completeIdempotencyKeyAtCommit(trx as Trx, { ...ref, status: 200, body });
}
