/**
 * What the sandbox domain needs from storage (src/data/store.ts over Kysely; the outbox producers
 * in src/events/ write inside the same transaction). Nothing here knows SQL, proto or Connect.
 */

/** A rail outcome for one transaction (published now, or scheduled for later on the sandbox clock). */
export interface OutcomePayload {
  transactionId: string;
  status: string;
  reason: string;
  /** ISO time (sandbox clock) the instruction's schedule reaches its outcome; absent on older schedule rows. */
  expectedSettlementAt?: string;
}

/** A scheduled outcome whose due time has come on its platform's sandbox clock. */
export interface DueAction {
  id: bigint;
  platformId: string;
  dueAt: Date;
  payload: OutcomePayload;
}

/** Statements bound to one transaction: what they write commits (or not) together. */
export interface ScheduleTx {
  /** The platform's current clock offset (0 before its first advance). */
  clockOffsetMs(platformId: string): Promise<bigint>;
  /** The platform's offset in effect at a past real time (0 before its first advance). */
  clockOffsetAt(platformId: string, realAt: Date): Promise<bigint>;
  /** Both in one statement: the current offset and the one in effect at `realAt`. */
  clockOffsetsNowAndAt(platformId: string, realAt: Date): Promise<{ now: bigint; at: bigint }>;
  /** Adds to the platform's offset (concurrent advances add up) and records the advance; returns the new offset. */
  addClockOffset(platformId: string, ms: bigint, realAt: Date): Promise<bigint>;
  scheduleOutcome(a: { platformId: string; dueAt: Date; payload: OutcomePayload; now: Date }): Promise<void>;
  /** Marks the action fired; false when someone else fired it first. */
  claimAction(id: bigint, now: Date): Promise<boolean>;
  /** Publishes a rail outcome (corridor.rail-outcomes.v1) through the outbox. */
  railOutcome(o: OutcomePayload & { platformId: string; at: Date }): Promise<void>;
  /** Announces a clock move (corridor.sandbox.v1 ClockAdvanced) through the outbox. */
  clockAdvanced(c: { platformId: string; sandboxNow: Date; offsetMs: bigint; realAt: Date }): Promise<void>;
}

export interface ScheduleStore {
  clockOffsetMs(platformId: string): Promise<bigint>;
  /** Whether any action is still pending, due or not. */
  anyPending(): Promise<boolean>;
  /** Pending actions due by real `realNow` plus their platform's offset, oldest first. */
  dueActions(realNow: Date, platformId: string | undefined, limit: number): Promise<DueAction[]>;
  transaction<T>(fn: (tx: ScheduleTx) => Promise<T>): Promise<T>;
  /** Binds the statements to a transaction the caller already holds (a consumer's inbox transaction). */
  within(trx: unknown): ScheduleTx;
}
