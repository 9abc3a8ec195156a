import { errors, type Clock } from "@corridor/kit";
import type { ScheduleStore, ScheduleTx } from "./ports.js";
import { expectedOutcomeSeconds, simulateInstruction } from "./rail-simulator.js";

export const MAX_ADVANCE_SECONDS = 30 * 24 * 3600;

/**
 * The sandbox rail connector and its clock. Instructions arrive from the ledger; outcomes due now
 * are published in the same transaction, later ones go to the durable schedule and are fired by
 * the worker (or at once by a clock advance) when the platform's sandbox clock reaches them.
 */
export function createSimulator(deps: { store: ScheduleStore; clock: Clock }) {
  const { store, clock } = deps;
  const BATCH = 100;

  const sandboxNow = async (d: Pick<ScheduleTx, "clockOffsetMs">, platformId: string) =>
    new Date(clock.now().getTime() + Number(await d.clockOffsetMs(platformId)));

  async function fireDue(platformId?: string): Promise<number> {
    let fired = 0;
    for (;;) {
      const due = await store.dueActions(clock.now(), platformId, BATCH);
      if (due.length === 0) return fired;
      for (const a of due) {
        const done = await store.transaction(async (tx) => {
          if (!(await tx.claimAction(a.id, clock.now()))) return false;
          await tx.railOutcome({ platformId: a.platformId, ...a.payload, at: a.dueAt });
          return true;
        });
        if (done) fired++;
      }
      if (due.length < BATCH) return fired;
    }
  }

  return {
    sandboxNow: (platformId: string) => sandboxNow(store, platformId),

    async clockOf(platformId: string) {
      const offset = await store.clockOffsetMs(platformId);
      return { now: new Date(clock.now().getTime() + Number(offset)), offsetSeconds: offset / 1000n };
    },

    /** Consumer of corridor.rails.v1, inside its inbox transaction (`trx`, opaque here: the store binds it). */
    async onInstruction(
      trx: unknown,
      i: { platformId: string; transactionId: string; kind?: string; umaAddress?: string; accountInfo?: Record<string, unknown>; occurredAt?: Date },
    ): Promise<void> {
      const tx = store.within(trx);
      // Delays run from the sandbox time the payment was made at (its instruction's occurredAt
      // on the platform's clock as it stood then), not from when the bus delivered it: a platform
      // that advances its clock right after the request must see the outcome, whichever came first.
      // Both offsets in one statement.
      const realNow = clock.now();
      const past = i.occurredAt && i.occurredAt <= realNow ? i.occurredAt : undefined;
      const offsets = past ? await tx.clockOffsetsNowAndAt(i.platformId, past) : { now: await tx.clockOffsetMs(i.platformId), at: 0n };
      const now = new Date(clock.now().getTime() + Number(offsets.now));
      const made = past ? new Date(past.getTime() + Number(offsets.at)) : now;
      const steps = simulateInstruction({ kind: i.kind ?? "", umaAddress: i.umaAddress ?? "", accountInfo: i.accountInfo });
      // Every outcome carries when the schedule reaches the payment's outcome (the ledger answers it
      // as Transaction.settledAt while the payment is in flight). A schedule whose first step is
      // later gets an immediate PROCESSING outcome, so the estimate is known from the start.
      const expectedSettlementAt = new Date(made.getTime() + expectedOutcomeSeconds(steps) * 1000).toISOString();
      if (steps.length > 0 && steps[0]!.afterSeconds > 0) {
        await tx.railOutcome({ platformId: i.platformId, transactionId: i.transactionId, status: "PROCESSING", reason: "", expectedSettlementAt, at: now });
      }
      for (const step of steps) {
        const payload = { transactionId: i.transactionId, status: step.status, reason: step.reason, expectedSettlementAt };
        const due = new Date(made.getTime() + step.afterSeconds * 1000);
        if (step.afterSeconds === 0 || due <= now) {
          await tx.railOutcome({ platformId: i.platformId, ...payload, at: step.afterSeconds === 0 ? now : due });
        } else {
          await tx.scheduleOutcome({ platformId: i.platformId, dueAt: due, payload, now: clock.now() });
        }
      }
    },

    async advance(platformId: string, seconds: bigint) {
      if (!platformId) throw errors.invalidInput([{ field: "platformId", reason: "is required" }]);
      if (seconds < 1n || seconds > BigInt(MAX_ADVANCE_SECONDS)) {
        throw errors.invalidInput([{ field: "seconds", reason: `must be an integer from 1 to ${MAX_ADVANCE_SECONDS}` }]);
      }
      // The move and its announcement (corridor.sandbox.v1 ClockAdvanced) commit together: timers
      // other services keep on this clock (the ledger's quote expiries) fire from the event.
      const offset = await store.transaction(async (tx) => {
        const realAt = clock.now();
        const total = await tx.addClockOffset(platformId, seconds * 1000n, realAt);
        await tx.clockAdvanced({ platformId, sandboxNow: new Date(realAt.getTime() + Number(total)), offsetMs: total, realAt });
        return total;
      });
      const fired = await fireDue(platformId);
      return { now: await sandboxNow(store, platformId), offsetSeconds: offset / 1000n, fired };
    },

    /** Publishes every scheduled outcome now due (of one platform, or of all); returns how many fired. */
    fireDue,

    /** Whether any scheduled outcome is still to fire, now or later. */
    anyPending: () => store.anyPending(),
  };
}

export type Simulator = ReturnType<typeof createSimulator>;

