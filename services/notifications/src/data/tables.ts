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
  /** When the current webhook_endpoint was set (its config version); null: set before this was kept. */
  endpoint_set_at: Date | null;
  /** The copy of the platform's webhookEventNaming: CORRIDOR or GRID. */
  webhook_event_naming: ColumnType<string, string | undefined, string>;
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
  /** From sending to the answer's headers (or the failure); null for attempts recorded before it was kept. */
  latency_ms: ColumnType<number | null, number | null | undefined, number | null>;
  /** The start of the answer's body (bounded); null when there was none. */
  response_excerpt: ColumnType<string | null, string | null | undefined, string | null>;
}

/**
 * PENDING until delivered (DELIVERED), given up (FAILED), or not to be sent at all (SKIPPED: the
 * event occurred before the platform's endpoint was set).
 */
export interface WebhookQueueTable {
  webhook_id: string;
  /** Enqueue order; webhooks of one resource are delivered in it. */
  seq: ColumnType<bigint, never, never>;
  platform_id: string;
  source_event_id: string;
  type: string;
  payload: string;
  status: "PENDING" | "DELIVERED" | "FAILED" | "SKIPPED";
  attempts: number;
  next_attempt_at: Date;
  leased_until: Date | null;
  last_error: string | null;
  /** When the event happened (the envelope's timestamp). */
  occurred_at: Date;
  /** The resource the webhook is about (data.id); null: no order to keep. */
  resource_key: string | null;
  /** When a redelivery was last asked for (the endpoint current then gets it); null: never. */
  redelivered_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  created_at: Date;
  updated_at: Date;
}

/** The generated webhook signing key of the deployment (one row, id 'current'). */
export interface DeploymentSigningKeyTable {
  id: string;
  private_key_pem: string;
  created_at: Date;
}

export interface NotificationsDatabase {
  deployment_signing_key: DeploymentSigningKeyTable;
  webhook_settings: WebhookSettingsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_queue: WebhookQueueTable;
}

/** What repository functions accept: the service's database or a transaction on it. */
export type Db = Kysely<NotificationsDatabase> | Transaction<NotificationsDatabase>;
