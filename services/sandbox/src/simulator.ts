import { errors, type BackgroundWorker, type Clock, type Logger } from "@corridor/kit";
import type { Kysely, Transaction } from "kysely";
import { addClockOffset, clockOffsetAt, claimAction, clockOffsetMs, dueActions, scheduleOutcome } from "./data/schedule.js";
import type { SandboxDatabase } from "./data/tables.js";
import { simulateInstruction } from "./domain/rail-simulator.js";
import { emitClockAdvanced } from "./events/clock-events.js";
import { emitRailOutcome } from "./events/rail-outcomes.js";

export const MAX_ADVANCE_SECONDS = 30 * 24 * 3600;

/**
 * The sandbox rail connector and its clock. Instructions arrive from the ledger; outcomes due now
 * are published in the same transaction, later ones go to the durable schedule and are fired by
 * the worker (or at once by a clock advance) when the platform's sandbox clock reaches them.
 */
export function createSimulator(deps: { db: Kysely<SandboxDatabase>; clock: Clock; log: Logger }) {
  const { db, clock, log } = deps;

  const sandboxNow = async (d: Kysely<SandboxDatabase> | Transaction<SandboxDatabase>, platformId: string) =>
    new Date(clock.now().getTime() + Number(await clockOffsetMs(d, platformId)));

  async function fireDue(platformId?: string): Promise<number> {
    let fired = 0;
    for (;;) {
      const due = await dueActions(db, clock.now(), platformId);
      if (due.length === 0) return fired;
      for (const a of due) {
        const done = await db.transaction().execute(async (trx) => {
          if (!(await claimAction(trx, a.id, clock.now()))) return false;
          await emitRailOutcome(trx, { platformId: a.platform_id, ...a.payload, at: a.due_at });
          return true;
        });
        if (done) fired++;
      }
      if (due.length < 100) return fired;
    }
  }

  return {
    sandboxNow: (platformId: string) => sandboxNow(db, platformId),

    async clockOf(platformId: string) {
      const offset = await clockOffsetMs(db, platformId);
      return { now: new Date(clock.now().getTime() + Number(offset)), offsetSeconds: offset / 1000n };
    },

    /** Consumer of corridor.rails.v1 (inside its inbox transaction). */
    async onInstruction(
      trx: Transaction<SandboxDatabase>,
      i: { platformId: string; transactionId: string; kind?: string; umaAddress?: string; accountInfo?: Record<string, unknown>; occurredAt?: Date },
    ): Promise<void> {
      const now = await sandboxNow(trx, i.platformId);
      // Delays run from the sandbox time the payment was made at (its instruction's occurredAt
      // on the platform's clock as it stood then), not from when the bus delivered it: a platform
      // that advances its clock right after the request must see the outcome, whichever came first.
      const made = i.occurredAt && i.occurredAt <= clock.now() ? new Date(i.occurredAt.getTime() + Number(await clockOffsetAt(trx, i.platformId, i.occurredAt))) : now;
      for (const step of simulateInstruction({ kind: i.kind ?? "", umaAddress: i.umaAddress ?? "", accountInfo: i.accountInfo })) {
        const payload = { transactionId: i.transactionId, status: step.status, reason: step.reason };
        const due = new Date(made.getTime() + step.afterSeconds * 1000);
        if (step.afterSeconds === 0 || due <= now) {
          await emitRailOutcome(trx, { platformId: i.platformId, ...payload, at: step.afterSeconds === 0 ? now : due });
        } else {
          await scheduleOutcome(trx, { platformId: i.platformId, dueAt: due, payload, now: clock.now() });
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
      const offset = await db.transaction().execute(async (trx) => {
        const realAt = clock.now();
        const total = await addClockOffset(trx, platformId, seconds * 1000n, realAt);
        await emitClockAdvanced(trx, { platformId, sandboxNow: new Date(realAt.getTime() + Number(total)), offsetMs: total, realAt });
        return total;
      });
      const fired = await fireDue(platformId);
      return { now: await sandboxNow(db, platformId), offsetSeconds: offset / 1000n, fired };
    },

    fireDue,

    /** Polls the schedule; after a restart it picks up whatever was pending. */
    worker(pollMs: number): BackgroundWorker {
      let timer: NodeJS.Timeout | undefined;
      let running: Promise<void> | undefined;
      let stopped = true;
      const tick = () => {
        running = fireDue()
          .then((n) => {
            if (n > 0) log.debug({ fired: n }, "sandbox schedule fired");
          })
          .catch((err) => log.warn({ err }, "sandbox schedule tick failed"))
          .finally(() => {
            running = undefined;
            if (!stopped) timer = setTimeout(tick, pollMs);
          });
      };
      return {
        name: "sandbox-schedule",
        start() {
          stopped = false;
          timer = setTimeout(tick, 0);
        },
        async stop() {
          stopped = true;
          if (timer) clearTimeout(timer);
          await running;
        },
      };
    },
  };
}

export type Simulator = ReturnType<typeof createSimulator>;

