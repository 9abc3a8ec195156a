import { toBinary, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import { context, propagation } from "@opentelemetry/api";
import type { Kysely, Transaction } from "kysely";
import { holdForCommit } from "./batch.js";
import { insertOutbox, type OutboxInsert } from "./statements.js";
import type { KitTables } from "./tables.js";

export interface EnqueueEventInput<Desc extends DescMessage> {
  /** Unprefixed topic, for example corridor.platforms.v1. */
  topic: string;
  /** Partition key: events with one key are delivered in the order they were enqueued. */
  key: string;
  /** The envelope's event_id; consumers deduplicate on it. */
  eventId: string;
  /** UPPER_SNAKE event type, carried as the event-type header. */
  eventType: string;
  /** Envelope message type of the topic. */
  schema: Desc;
  message: MessageShape<Desc>;
}

/**
 * Records an event in the outbox of the transaction's schema. Call it inside the transaction that
 * makes the change the event describes: both commit or neither does. The relay publishes it later,
 * with the trace context active here, so consumers join this trace. In a transaction opened by
 * inTransaction the row is written with the transaction's other events just before the commit;
 * otherwise at once.
 */
export async function enqueueEvent<Desc extends DescMessage>(
  trx: Transaction<any> | Kysely<any>,
  input: EnqueueEventInput<Desc>,
): Promise<void> {
  const headers: Record<string, string> = {
    "event-id": input.eventId,
    "event-type": input.eventType,
    "content-type": "application/x-protobuf",
  };
  propagation.inject(context.active(), headers);
  const row: OutboxInsert = {
    event_id: input.eventId,
    topic: input.topic,
    key: input.key,
    payload: Buffer.from(toBinary(input.schema, input.message)),
    headers: JSON.stringify(headers),
  };
  if (holdForCommit(trx, row)) return;
  await insertOutbox(trx as Kysely<KitTables>, [row]);
}
