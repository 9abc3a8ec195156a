import type { KitTables } from "@corridor/kit";
import type { ColumnType } from "kysely";

/** Kysely types of the agents schema (migrations/); the kit's outbox, inbox and idempotency_keys come with KitTables. */

type Json<T> = ColumnType<T, string, string>;
type Created = ColumnType<Date, Date, never>;

export interface AgentsTable {
  id: string;
  platform_id: string;
  customer_id: string;
  platform_customer_id: string;
  name: string;
  is_paused: boolean;
  is_connected: boolean;
  /** PolicyJson: amounts as decimal strings. */
  policy: Json<unknown>;
  deleted_at: Date | null;
  created_at: Created;
  updated_at: Date;
}

export interface DeviceCodesTable {
  code: string;
  platform_id: string;
  agent_id: string;
  expires_at: Date;
  redeemed_at: Date | null;
  voided_at: Date | null;
  created_at: Created;
}

export interface AccessTokensTable {
  token_hash: string;
  platform_id: string;
  agent_id: string;
  created_at: Created;
}

export interface UsageTable {
  platform_id: string;
  agent_id: string;
  window_kind: "DAY" | "MONTH";
  window_key: string;
  count: bigint;
  amount: bigint;
}

export interface ActionsTable {
  id: string;
  platform_id: string;
  agent_id: string;
  customer_id: string;
  platform_customer_id: string;
  type: string;
  status: string;
  quote_id: string | null;
  transaction_id: string | null;
  amount: bigint;
  currency: string;
  source_account_id: string;
  destination_account_id: string;
  description: string;
  counted_amount: bigint;
  day_key: string;
  month_key: string;
  execution_state: string;
  execution_claimed_at: Date | null;
  rejection_reason: string;
  failure_reason: string;
  failure_message: string;
  expires_at: Date | null;
  quote_snapshot: Uint8Array | null;
  transaction_snapshot: Uint8Array | null;
  created_at: Created;
  updated_at: Date;
}

export interface TransactionOutcomesTable {
  platform_id: string;
  transaction_id: string;
  status: string;
  failure_reason: string;
  snapshot: Uint8Array;
  recorded_at: Date;
}

export interface AgentsDatabase extends KitTables {
  agents: AgentsTable;
  device_codes: DeviceCodesTable;
  access_tokens: AccessTokensTable;
  usage: UsageTable;
  actions: ActionsTable;
  transaction_outcomes: TransactionOutcomesTable;
}
