import type { OutcomePublisher, OutcomeStatus } from "@corridor/connector";
import { afterCommit, inTransaction } from "@corridor/kit";
import type { Kysely, Transaction } from "kysely";
import type { ScheduleStore, ScheduleTx } from "../domain/ports.js";
import { emitClockAdvanced } from "../events/clock-events.js";
import { addClockOffset, anyPending, claimAction, clockOffsetAt, clockOffsetMs, clockOffsetsNowAndAt, dueActions, scheduleOutcome } from "./schedule.js";
import type { SandboxDatabase } from "./tables.js";

/**
 * The domain's ScheduleStore over Kysely: the repository (schedule.ts) does the SQL, outcomes go
 * out through the rail-connector package's publisher (connector_outcomes + the outbox); this only wires it.
 */
export function createStore(db: Kysely<SandboxDatabase>, outcomes: OutcomePublisher, hooks: { onScheduled?: () => void } = {}): ScheduleStore {
  const bind = (trx: Transaction<SandboxDatabase>): ScheduleTx => ({
    clockOffsetMs: (p) => clockOffsetMs(trx, p),
    clockOffsetAt: (p, at) => clockOffsetAt(trx, p, at),
    clockOffsetsNowAndAt: (p, at) => clockOffsetsNowAndAt(trx, p, at),
    addClockOffset: (p, ms, at) => addClockOffset(trx, p, ms, at),
    scheduleOutcome: async (a) => {
      await scheduleOutcome(trx, a);
      // Once the action is durable the schedule worker, resting while nothing was pending, looks.
      if (hooks.onScheduled) afterCommit(trx, hooks.onScheduled);
    },
    claimAction: (id, now) => claimAction(trx, id, now),
    railOutcome: (o) =>
      outcomes.report(trx, {
        platformId: o.platformId,
        transactionId: o.transactionId,
        status: o.status as OutcomeStatus,
        reason: o.reason,
        at: o.at,
        expectedSettlementAt: o.expectedSettlementAt ? new Date(o.expectedSettlementAt) : undefined,
      }),
    clockAdvanced: (c) => emitClockAdvanced(trx, c),
  });
  return {
    clockOffsetMs: (p) => clockOffsetMs(db, p),
    anyPending: () => anyPending(db),
    dueActions: async (realNow, platformId, limit) =>
      (await dueActions(db, realNow, platformId, limit)).map((a) => ({ id: a.id, platformId: a.platform_id, dueAt: a.due_at, payload: a.payload })),
    transaction: (fn) => inTransaction(db, (trx) => fn(bind(trx))),
    within: (trx) => bind(trx as Transaction<SandboxDatabase>),
  };
}
