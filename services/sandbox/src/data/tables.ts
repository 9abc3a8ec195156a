import type { ColumnType, Generated } from "kysely";
import type { KitTables } from "@corridor/kit";

export interface ClocksTable {
  platform_id: string;
  offset_ms: bigint;
  updated_at: Date;
}

/** A rail outcome to publish when the platform's sandbox clock reaches due_at. */
export interface OutcomePayload {
  transactionId: string;
  status: string;
  reason: string;
}

export interface ScheduledActionsTable {
  id: Generated<bigint>;
  platform_id: string;
  due_at: Date;
  kind: "RAIL_OUTCOME";
  payload: ColumnType<OutcomePayload, string, string>;
  status: "PENDING" | "FIRED";
  created_at: Date;
  fired_at: Date | null;
}

/** One advance of a platform's clock: from real time `at` on, its offset is `offset_ms`. */
export interface ClockAdvancesTable {
  id: Generated<bigint>;
  platform_id: string;
  at: Date;
  offset_ms: bigint;
}

export interface SandboxDatabase extends KitTables {
  clocks: ClocksTable;
  clock_advances: ClockAdvancesTable;
  scheduled_actions: ScheduledActionsTable;
}
