import { createHash } from "node:crypto";
import type { Kysely, QueryCreator, Transaction } from "kysely";
import { canonicalJson } from "./canonical-json.js";
import { fixedShapeQuery } from "./db/fixed-shape.js";
import { AppError } from "./errors.js";
import type { KitTables } from "./outbox/tables.js";

/**
 * Idempotency-Key handling (decisions §3), over the `idempotency_keys` table the kit migrates into
 * every service schema. The life of a key:
 *
 *   claimIdempotencyKey(db)        commits an in_flight row with a lease, in its own statement;
 *   ...the money transaction...    ends with completeIdempotencyKey(trx) so the effect and the
 *                                  stored response commit together;
 *   releaseIdempotencyKey(db)      when the effect failed without committing, so a retry may run.
 *
 * A holder that crashed leaves an in_flight row whose lease runs out; the same request may then
 * claim it again. Keys live 24 h; an expired row counts as absent.
 */

/** How long a key is remembered. */
export const IDEMPOTENCY_KEY_TTL_MS = 24 * 60 * 60 * 1000;
/** Default lease of an in_flight claim. */
export const IDEMPOTENCY_LEASE_MS = 30_000;

export type IdempotencyClaim =
  /** First use (or a retry after an expired lease or key): run the effect. */
  | { kind: "new" }
  /** Completed before with the same body: answer with this, header Idempotent-Replayed: true. */
  | { kind: "replay"; status: number; body: unknown }
  /** Used before with another body: 422 IDEMPOTENCY_KEY_REUSED. */
  | { kind: "conflict" }
  /** The first request is still running: 409 IDEMPOTENCY_KEY_IN_USE. */
  | { kind: "in_flight" };

export interface IdempotencyKeyRef {
  platformId: string;
  key: string;
  /** requestHash(body) of the request using the key. */
  requestHash: string;
}

export interface ClaimIdempotencyKeyInput extends IdempotencyKeyRef {
  now: Date;
  /** Lease of the in_flight claim (default 30 s). */
  leaseMs?: number;
  /** Lifetime of the key (default 24 h). */
  ttlMs?: number;
}

export interface CompleteIdempotencyKeyInput extends IdempotencyKeyRef {
  /** HTTP status of the first response. */
  status: number;
  /** Body of the first response (JSON-ready; bigints are stored as numbers). */
  body: unknown;
}

type Db = Kysely<any> | Transaction<any>;

/** A key's first claim: one per money request, so built and compiled once (db/fixed-shape.ts). */
const insertClaim = fixedShapeQuery((k: Kysely<KitTables>, a: { platformId: string; key: string; requestHash: string; lockedUntil: Date; now: Date; expiresAt: Date }) =>
  k
    .insertInto("idempotency_keys")
    .values({
      platform_id: a.platformId,
      key: a.key,
      request_hash: a.requestHash,
      state: "in_flight",
      response_status: null,
      response_body: null,
      locked_until: a.lockedUntil,
      created_at: a.now,
      expires_at: a.expiresAt,
    })
    .onConflict((oc) => oc.columns(["platform_id", "key"]).doNothing())
    .returning("key"),
);

/** Claims a key for a request. `db` is the service's schema-scoped database, not a transaction. */
export async function claimIdempotencyKey(db: Db, input: ClaimIdempotencyKeyInput): Promise<IdempotencyClaim> {
  const k = db as Kysely<KitTables>;
  const now = input.now;
  const lockedUntil = new Date(now.getTime() + (input.leaseMs ?? IDEMPOTENCY_LEASE_MS));
  const expiresAt = new Date(now.getTime() + (input.ttlMs ?? IDEMPOTENCY_KEY_TTL_MS));
  const fresh = {
    request_hash: input.requestHash,
    state: "in_flight" as const,
    response_status: null,
    response_body: null,
    locked_until: lockedUntil,
    created_at: now,
    expires_at: expiresAt,
  };

  // A released key can vanish between our statements; a few rounds settle it.
  for (let round = 0; round < 5; round++) {
    // Each statement is atomic on its own; concurrent claimers queue on the row and exactly one
    // of them inserts (or takes over) it.
    const inserted = (await insertClaim.execute(k, { platformId: input.platformId, key: input.key, requestHash: input.requestHash, lockedUntil, now, expiresAt })).rows[0];
    if (inserted) return { kind: "new" };

    // Taken over: a key past its 24 h, or the same request whose holder's lease ran out.
    const takenOver = await k
      .updateTable("idempotency_keys")
      .set(fresh)
      .where("platform_id", "=", input.platformId)
      .where("key", "=", input.key)
      .where((eb) =>
        eb.or([
          eb("expires_at", "<=", now),
          eb.and([eb("state", "=", "in_flight"), eb("locked_until", "<=", now), eb("request_hash", "=", input.requestHash)]),
        ]),
      )
      .returning("key")
      .executeTakeFirst();
    if (takenOver) return { kind: "new" };

    const row = await k
      .selectFrom("idempotency_keys")
      .select(["request_hash", "state", "response_status", "response_body", "expires_at"])
      .where("platform_id", "=", input.platformId)
      .where("key", "=", input.key)
      .executeTakeFirst();
    if (!row) continue;
    if (row.request_hash !== input.requestHash) return { kind: "conflict" };
    if (row.state === "completed") {
      return { kind: "replay", status: row.response_status ?? 200, body: row.response_body };
    }
    return { kind: "in_flight" };
  }
  return { kind: "in_flight" };
}

/**
 * Stores the response of a claimed key. Call it INSIDE the transaction of the effect. Throws a 409
 * IDEMPOTENCY_KEY_IN_USE (rolling that transaction back) when the claim is no longer ours: the key
 * was completed by another holder after our lease ran out.
 */
export async function completeIdempotencyKey(trx: Db, input: CompleteIdempotencyKeyInput): Promise<void> {
  const done = await completionUpdate(trx as Kysely<KitTables>, storedCompletion(input)).executeTakeFirst();
  if (!done) throw keyCompletedElsewhere();
}

/** The 409 of a completion that found the key no longer ours (it rolls the effect's transaction back). */
export function keyCompletedElsewhere(): AppError {
  return new AppError("CONFLICT", "IDEMPOTENCY_KEY_IN_USE", "This Idempotency-Key was completed by another request", {}, { shouldNotRetry: false });
}

/** A completion as it is stored: the response body as JSON text. */
export interface StoredCompletion extends IdempotencyKeyRef {
  status: number;
  responseBody: string;
}

export function storedCompletion(input: CompleteIdempotencyKeyInput): StoredCompletion {
  return { platformId: input.platformId, key: input.key, requestHash: input.requestHash, status: input.status, responseBody: JSON.stringify(input.body, jsonSafe) };
}

/**
 * The completion's UPDATE, answering the key when it was still our in_flight claim (none
 * otherwise). Its shape is fixed: `input`'s fields are only passed on as values (a fixed-shape
 * query, db/fixed-shape.ts, builds it with stand-ins for them).
 */
export function completionUpdate(db: QueryCreator<KitTables>, input: StoredCompletion) {
  return db
    .updateTable("idempotency_keys")
    .set({
      state: "completed",
      response_status: input.status,
      response_body: input.responseBody,
      locked_until: null,
    })
    .where("platform_id", "=", input.platformId)
    .where("key", "=", input.key)
    .where("request_hash", "=", input.requestHash)
    .where("state", "=", "in_flight")
    .returning("key");
}

/** Forgets an in_flight claim whose effect did not commit, so the client's retry can run. */
export async function releaseIdempotencyKey(db: Db, input: IdempotencyKeyRef): Promise<void> {
  await (db as Kysely<KitTables>)
    .deleteFrom("idempotency_keys")
    .where("platform_id", "=", input.platformId)
    .where("key", "=", input.key)
    .where("request_hash", "=", input.requestHash)
    .where("state", "=", "in_flight")
    .execute();
}

/** Deletes keys past their lifetime (they already count as absent); returns how many. */
export async function pruneIdempotencyKeys(db: Db, now: Date): Promise<number> {
  const res = await (db as Kysely<KitTables>).deleteFrom("idempotency_keys").where("expires_at", "<=", now).executeTakeFirst();
  return Number(res.numDeletedRows);
}

/**
 * SHA-256 (hex) of the canonical JSON (RFC 8785, see canonical-json.ts) of a request body: object
 * keys sorted at every depth, undefined members dropped, bigints as plain digits. Two bodies that
 * mean the same hash the same.
 */
export function requestHash(body: unknown): string {
  return createHash("sha256").update(canonicalJson(body)).digest("hex");
}

// Amounts are at most 9e15 (below 2^53), so a bigint becomes an exact JSON number.
function jsonSafe(_key: string, value: unknown): unknown {
  if (typeof value !== "bigint") return value;
  return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
}
