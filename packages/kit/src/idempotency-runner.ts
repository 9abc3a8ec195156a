import type { Kysely } from "kysely";
import type { Clock } from "./clock.js";
import { AppError, errors } from "./errors.js";
import { claimIdempotencyKey, releaseIdempotencyKey, requestHash, type IdempotencyClaim, type IdempotencyKeyRef } from "./idempotency.js";

/** Claim and release of a service's idempotency keys (its schema's kit table, or a fake). */
export interface IdempotencyKeyStore {
  claim(ref: IdempotencyKeyRef, now: Date): Promise<IdempotencyClaim>;
  release(ref: IdempotencyKeyRef): Promise<void>;
}

/** The kit's idempotency_keys table of one schema (`db` is schema-scoped, not a transaction). */
export function idempotencyKeyStore(db: Kysely<any>): IdempotencyKeyStore {
  return {
    claim: (ref, now) => claimIdempotencyKey(db, { ...ref, now }),
    release: (ref) => releaseIdempotencyKey(db, ref),
  };
}

export interface IdempotentRequest {
  platformId: string;
  /** The client's Idempotency-Key; empty means no key (the effect simply runs). */
  key: string;
  /** The request as hashed for the key (requestHash). */
  request: unknown;
  /** A space of the platform's keys (stored as `<namespace>/<key>`), for example `agent/<id>`. */
  namespace?: string;
  /** Refuse keys that are not 1–255 printable ASCII characters (INVALID_INPUT). */
  checkKey?: boolean;
}

/**
 * Runs `effect` once per key. `effect` gets the claimed key's ref and must complete it
 * (completeIdempotencyKey) inside its own transaction, so the effect and the stored answer commit
 * together. `replay` turns a stored answer into the value. With no key, `effect` gets undefined.
 */
export type IdempotencyRunner = <T>(
  req: IdempotentRequest,
  effect: (ref: IdempotencyKeyRef | undefined) => Promise<T>,
  replay: (stored: { status: number; body: unknown }) => T | Promise<T>,
) => Promise<{ value: T; replayed: boolean }>;

/**
 * Decisions §3 around one effect: the key is claimed in its own statement (a concurrent
 * duplicate sees it at once: CONFLICT IDEMPOTENCY_KEY_IN_USE), the same key with another request
 * is UNPROCESSABLE IDEMPOTENCY_KEY_REUSED, a completed key replays, and an effect that fails
 * before completing releases the key so a retry may run.
 */
export function createIdempotencyRunner(keys: IdempotencyKeyStore, clock: Clock): IdempotencyRunner {
  return async (req, effect, replay) => {
    if (!req.key) return { value: await effect(undefined), replayed: false };
    if (req.checkKey && !/^[\x20-\x7E]{1,255}$/.test(req.key)) {
      throw errors.invalidInput([{ field: "Idempotency-Key", reason: "must be 1 to 255 printable ASCII characters" }]);
    }
    const ref: IdempotencyKeyRef = {
      platformId: req.platformId,
      key: req.namespace ? `${req.namespace}/${req.key}` : req.key,
      requestHash: requestHash(req.request),
    };
    const claim = await keys.claim(ref, clock.now());
    if (claim.kind === "replay") return { value: await replay({ status: claim.status, body: claim.body }), replayed: true };
    if (claim.kind === "conflict") {
      throw new AppError("UNPROCESSABLE", "IDEMPOTENCY_KEY_REUSED", "This Idempotency-Key was used with a different request body", { idempotencyKey: req.key });
    }
    if (claim.kind === "in_flight") {
      throw new AppError("CONFLICT", "IDEMPOTENCY_KEY_IN_USE", "A request with this Idempotency-Key is still being processed; retry later", { idempotencyKey: req.key }, { shouldNotRetry: false });
    }
    try {
      return { value: await effect(ref), replayed: false };
    } catch (err) {
      // Only an in_flight key is deleted: once the effect's transaction completed it, it stays.
      await keys.release(ref).catch(() => undefined);
      throw err;
    }
  };
}
