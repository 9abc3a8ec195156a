import type { ColumnType, Kysely, Transaction } from "kysely";

/** Nullable int8: read as bigint, written as a decimal string so both drivers take it. */
type NullableInt8 = ColumnType<bigint | null, string | null, string | null>;

export interface WebhookSettingsTable {
  platform_id: string;
  webhook_endpoint: string;
  secret: string;
  secret_created_at: Date;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  config_version: NullableInt8;
  created_at: Date;
  updated_at: Date;
}

export interface WebhookDeliveriesTable {
  id: string;
  platform_id: string;
  webhook_id: string;
  type: string;
  url: string;
  request_body: string;
  response_status: number;
  delivered: boolean;
  error: string | null;
  attempted_at: Date;
}

/** PENDING until delivered (DELIVERED) or given up (FAILED). */
export interface WebhookQueueTable {
  webhook_id: string;
  platform_id: string;
  source_event_id: string;
  type: string;
  payload: string;
  status: "PENDING" | "DELIVERED" | "FAILED";
  attempts: number;
  next_attempt_at: Date;
  leased_until: Date | null;
  last_error: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface NotificationsDatabase {
  webhook_settings: WebhookSettingsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_queue: WebhookQueueTable;
}

/** What repository functions accept: the service's database or a transaction on it. */
export type Db = Kysely<NotificationsDatabase> | Transaction<NotificationsDatabase>;
