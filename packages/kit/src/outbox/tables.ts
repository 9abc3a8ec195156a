import type { ColumnType, Generated } from "kysely";

/** Tables the kit's own migrations create in every service schema. */
export interface OutboxTable {
  id: Generated<bigint>;
  event_id: string;
  topic: string;
  key: string;
  payload: Uint8Array;
  headers: ColumnType<Record<string, string>, string, string>;
  created_at: ColumnType<Date, Date | string | undefined, never>;
  published_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** Until when the relay in `leased_by` may publish this row without another relay taking it. */
  lease_until: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** The relay that last leased the row; kept when the lease is given back (the row may be on the bus), null only for a row never leased. */
  leased_by: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface InboxTable {
  consumer: string;
  event_id: string;
  processed_at: ColumnType<Date, Date | string | undefined, never>;
}

export interface IdempotencyKeysTable {
  platform_id: string;
  key: string;
  request_hash: string;
  state: "in_flight" | "completed";
  response_status: number | null;
  response_body: ColumnType<unknown, string | null, string | null>;
  locked_until: ColumnType<Date | null, Date | null, Date | null>;
  created_at: ColumnType<Date, Date, Date>;
  expires_at: ColumnType<Date, Date, Date>;
}

export interface KitTables {
  outbox: OutboxTable;
  inbox: InboxTable;
  idempotency_keys: IdempotencyKeysTable;
}
