import type { Kysely, Transaction } from "kysely";
import type { KitTables } from "./tables.js";

/** An outbox row as enqueueEvent builds it. */
export interface OutboxInsert {
  event_id: string;
  topic: string;
  key: string;
  payload: Buffer;
  headers: string;
}

/**
 * Outbox rows waiting in a transaction opened by inTransaction, keyed by the transaction object
 * (dropped with it). A money movement emits several events; writing them as one multi-row INSERT
 * right before the commit saves a round trip and a NOTIFY per event.
 */
const waiting = new WeakMap<object, { rows: OutboxInsert[]; committed: (() => void)[] }>();

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
    waiting.set(trx, { rows, committed });
    try {
      const value = await fn(trx);
      if (rows.length > 0) await (trx as unknown as Transaction<KitTables>).insertInto("outbox").values(rows.splice(0)).execute();
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
