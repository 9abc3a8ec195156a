import { completeIdempotencyKey, idempotencyKeyStore } from "@corridor/kit";
import type { Kysely } from "kysely";
import type { IdempotencyKeys, IdempotencyRef } from "../domain/ports.js";
import type { AgentsDatabase } from "./tables.js";
import type { Db } from "./agents.js";

/** The kit's idempotency_keys table of the agents schema (migrated by the kit). */
export function idempotencyKeys(db: Kysely<AgentsDatabase>): IdempotencyKeys {
  return idempotencyKeyStore(db);
}

/** Inside the effect's transaction: the stored answer commits with the effect. */
export function completeKey(trx: Db, ref: IdempotencyRef, body: unknown): Promise<void> {
  return completeIdempotencyKey(trx, { ...ref, status: 200, body });
}
