import { sql, type Kysely, type QueryCreator } from "kysely";
import { fixedShapeQuery } from "../db/fixed-shape.js";
import { completionUpdate, type StoredCompletion } from "../idempotency.js";
import type { KitTables } from "./tables.js";

// The kit's statements on every event's path (an inbox row per consumed event, the outbox rows of
// each committing transaction), built and compiled once per database handle (db/fixed-shape.ts).
// Their number of rows is their variant: one compiled shape per count.

/** An outbox row as enqueueEvent builds it. */
export interface OutboxInsert {
  event_id: string;
  topic: string;
  key: string;
  payload: Buffer;
  headers: string;
}

export interface InboxInsert {
  consumer: string;
  event_id: string;
}

const outboxValues = (rows: readonly OutboxInsert[], n: number) =>
  Array.from({ length: n }, (_, i) => ({ event_id: rows[i]!.event_id, topic: rows[i]!.topic, key: rows[i]!.key, payload: rows[i]!.payload, headers: rows[i]!.headers }));

/** Records (consumer, event id) rows in the inbox; answers the ones that were not there yet. */
const recordInboxQuery = fixedShapeQuery((k: Kysely<KitTables>, a: { rows: InboxInsert[] }, n: number) =>
  k
    .insertInto("inbox")
    .values(Array.from({ length: n }, (_, i) => ({ consumer: a.rows[i]!.consumer, event_id: a.rows[i]!.event_id })))
    .onConflict((oc) => oc.columns(["consumer", "event_id"]).doNothing())
    .returning(["consumer", "event_id"]),
);

export async function recordInbox(db: Kysely<KitTables>, rows: InboxInsert[]): Promise<InboxInsert[]> {
  if (rows.length === 0) return [];
  return (await recordInboxQuery.execute(db, { rows }, rows.length)).rows;
}

const insertOutboxQuery = fixedShapeQuery((k: Kysely<KitTables>, a: { rows: OutboxInsert[] }, n: number) => k.insertInto("outbox").values(outboxValues(a.rows, n)));

/** The rows in one INSERT, in their order (a multi-row VALUES takes the id sequence row by row). */
export async function insertOutbox(db: Kysely<KitTables>, rows: OutboxInsert[]): Promise<void> {
  if (rows.length > 0) await insertOutboxQuery.execute(db, { rows }, rows.length);
}

/**
 * Idempotency completions as data-modifying CTEs (k0, k1, …) and outbox rows (`events`) in one
 * statement, answering per completion how many keys it completed. Variant: `<keys>:<rows>`.
 */
const completeAndInsertQuery = fixedShapeQuery((k: Kysely<KitTables>, a: { keys: StoredCompletion[]; rows: OutboxInsert[] }, variant: string) => {
  const [keys, rows] = variant.split(":").map(Number) as [number, number];
  let q = k.with("k0", (db) => completionUpdate(db as unknown as QueryCreator<KitTables>, a.keys[0]!));
  for (let i = 1; i < keys; i++) q = q.with(`k${i}`, (db) => completionUpdate(db as unknown as QueryCreator<KitTables>, a.keys[i]!)) as unknown as typeof q;
  if (rows > 0) q = q.with("events", (db) => db.insertInto("outbox").values(outboxValues(a.rows, rows))) as unknown as typeof q;
  return q.selectNoFrom(Array.from({ length: keys }, (_, i) => sql<string>`${sql.raw(`(select count(*) from k${i})`)}`.as(`k${i}`)));
});

/** Completes the keys and inserts the rows in one statement; answers, per key, whether it was still our claim. */
export async function completeAndInsertOutbox(db: Kysely<KitTables>, keys: StoredCompletion[], rows: OutboxInsert[]): Promise<boolean[]> {
  if (keys.length === 0) {
    await insertOutbox(db, rows);
    return [];
  }
  const done = (await completeAndInsertQuery.execute(db, { keys, rows }, `${keys.length}:${rows.length}`)).rows[0] as Record<string, unknown> | undefined;
  return keys.map((_, i) => Number(done?.[`k${i}`]) > 0);
}
