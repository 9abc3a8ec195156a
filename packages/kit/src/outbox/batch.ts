import type { Kysely, Transaction } from "kysely";
import { completeIdempotencyKey, keyCompletedElsewhere, storedCompletion, type CompleteIdempotencyKeyInput } from "../idempotency.js";
import { completeAndInsertOutbox, type OutboxInsert } from "./statements.js";
import type { KitTables } from "./tables.js";

export type { OutboxInsert } from "./statements.js";

/**
 * Outbox rows waiting in a transaction opened by inTransaction, keyed by the transaction object
 * (dropped with it). A money movement emits several events; writing them as one multi-row INSERT
 * right before the commit saves a round trip and a NOTIFY per event.
 */
const waiting = new WeakMap<object, { rows: OutboxInsert[]; committed: (() => void)[]; keys: CompleteIdempotencyKeyInput[] }>();

/**
 * Runs `fn` in a transaction of `db` and writes the outbox rows it enqueued in one INSERT before
 * the commit. Rows keep the order they were enqueued in (a multi-row VALUES takes the outbox's
 * id sequence row by row), so the relay publishes them in that order. When `fn` throws, they are
 * dropped with the rollback. Use it wherever a transaction may enqueue events. Callbacks given to
 * afterCommit run once the commit succeeded.
 */
export async function inTransaction<DB, T>(db: Kysely<DB>, fn: (trx: Transaction<DB>) => Promise<T>): Promise<T> {
  const committed: (() => void)[] = [];
  const result = await db.transaction().execute(async (trx) => {
    const rows: OutboxInsert[] = [];
    const keys: CompleteIdempotencyKeyInput[] = [];
    waiting.set(trx, { rows, committed, keys });
    try {
      const value = await fn(trx);
      await writeHeld(trx as unknown as Transaction<KitTables>, rows.splice(0), keys.splice(0));
      return value;
    } finally {
      waiting.delete(trx);
    }
  });
  for (const f of committed) f();
  return result;
}

/**
 * Runs `f` once the transaction has committed (never when it rolls back), for facts that may only
 * be remembered outside the database once they are durable, such as a cached id of a row the
 * transaction created. False when `trx` was not opened by inTransaction: the caller must not
 * remember the fact.
 */
export function afterCommit(trx: object, f: () => void): boolean {
  const t = waiting.get(trx);
  if (!t) return false;
  t.committed.push(f);
  return true;
}

/** Holds the row for the transaction's single INSERT; false when `trx` was not opened by inTransaction. */
export function holdForCommit(trx: object, row: OutboxInsert): boolean {
  const t = waiting.get(trx);
  if (!t) return false;
  t.rows.push(row);
  return true;
}

/**
 * The held outbox rows and idempotency completions in one statement: the completions as
 * data-modifying CTEs, each answering whether the key was still our claim (a 409 otherwise, which
 * rolls the transaction back as completeIdempotencyKey's would), the rows as one INSERT.
 */
async function writeHeld(trx: Transaction<KitTables>, rows: OutboxInsert[], keys: CompleteIdempotencyKeyInput[]): Promise<void> {
  const done = await completeAndInsertOutbox(trx, keys.map(storedCompletion), rows);
  if (done.includes(false)) throw keyCompletedElsewhere();
}

/**
 * completeIdempotencyKey, written with the transaction's outbox rows just before its commit when
 * `trx` was opened by inTransaction (one statement for both), at once otherwise. Either way the key
 * is completed with the effect or the transaction rolls back (409 IDEMPOTENCY_KEY_IN_USE when the
 * key is no longer ours); use it as the effect's last step.
 */
export async function completeIdempotencyKeyAtCommit(trx: Transaction<any> | Kysely<any>, input: CompleteIdempotencyKeyInput): Promise<void> {
  const t = waiting.get(trx);
  if (!t) return completeIdempotencyKey(trx, input);
  t.keys.push(input);
}
