import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { ManualClock, createInProcessBus, createLogger, newId, type Bus, type DatabaseHandle, type Subscription, type z } from "@corridor/kit";
import { openServiceTestDatabase } from "@corridor/kit/testing";
import { RailInstructionSchema, RailOutcomeSchema } from "@corridor/proto/corridor/ledger/v1/rails_pb.js";
import { RailNoticeSchema, type RailNotice } from "@corridor/proto/corridor/ledger/v1/rail_notices_pb.js";
import type { Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  RAIL_NOTICES_TOPIC,
  RAIL_OUTCOMES_TOPIC,
  environmentOf,
  instructionTopic,
  settle,
  type OutcomeStatus,
  type PublishedOutcome,
  type RailEnvironment,
  type RailInstruction,
} from "../contract.js";
import { CONNECTOR_MIGRATIONS_DIR, startConnector, toWire, type ConnectorDefinition, type RunningConnector } from "../runtime.js";

/**
 * The rail notices a connector enqueued in its outbox (contract 1.2), oldest first, decoded, with
 * their bus key: what the ledger will receive. For connectors' tests.
 */
export async function publishedNotices(db: Kysely<any>): Promise<(RailNotice & { key: string })[]> {
  const rows = (await db.selectFrom("outbox").select(["payload", "key"]).where("topic", "=", RAIL_NOTICES_TOPIC).orderBy("id").execute()) as { payload: Uint8Array; key: string }[];
  return rows.map((r) => Object.assign(fromBinary(RailNoticeSchema, r.payload), { key: r.key }));
}

/** What an instruction of a scenario looks like (the suite fills ids, platform, amount, time). */
export type InstructionSeed = Pick<RailInstruction, "direction" | "currency" | "paymentRail" | "accountInfo"> & Partial<Pick<RailInstruction, "kind" | "amount" | "umaAddress">>;

/** A connector under the contract suite. */
export interface ContractSubject<S extends z.ZodObject = z.ZodObject> {
  definition: ConnectorDefinition<S>;
  /** The connector's settings for the run (its schema's environment keys). */
  env?: NodeJS.ProcessEnv;
  /** Instructions this connector (with its test bank, if any) completes, fails, and completes then sees returned. */
  scenarios: { completes: InstructionSeed; fails: InstructionSeed; returnsAfterCompletion: InstructionSeed };
  /**
   * Moves the connector's world on while the suite waits for outcomes (called before each look):
   * answer the files it uploaded, move the clock past its windows. The clock is the connector's.
   */
  progress?(ctx: { clock: ManualClock; db: Kysely<any> }): Promise<void>;
  /** Where the clock starts (default 2026-01-05T15:00:00Z, a Monday afternoon). */
  startAt?: Date;
  /** How long (real ms) the suite waits for a condition before it fails (default 15000). */
  waitMs?: number;
}

interface Harness {
  clock: ManualClock;
  bus: Bus;
  db: DatabaseHandle;
  running?: RunningConnector;
  outcomes: PublishedOutcome[];
}

/**
 * The rail contract's test suite (docs/connectors.md, "Contract test suite"): every connector runs
 * it from its own tests (`connectorContractSuite({ definition, scenarios, ... })` in
 * connectors/<name>/test/contract.test.ts). It drives the connector as the ledger would, over the
 * in-process bus and a database of its own, and checks what it publishes: addressed outcomes, one
 * effect per transaction whatever is delivered twice, nothing lost or repeated across a restart in
 * the middle of a batch, an outcome sequence whose end does not depend on the order a consumer sees
 * it in, and a return after completion that reverses the money.
 */
export function connectorContractSuite<S extends z.ZodObject>(subject: ContractSubject<S>): void {
  const def = subject.definition;
  const environment: RailEnvironment = environmentOf(def.name);
  const topic = instructionTopic(def.name);
  const waitMs = subject.waitMs ?? 15_000;
  const log = createLogger(`${def.name}-contract`, "silent");
  const h = {} as Harness;
  let drop: () => Promise<void> = async () => {};
  let outcomeSubscription: Subscription | undefined;
  const platformId = newId("Platform");

  const start = async (definition: ConnectorDefinition<S> = def) => {
    h.running = await startConnector(definition, { db: h.db, bus: h.bus, clock: h.clock, log, env: subject.env ?? {} });
    return h.running;
  };
  const stop = async () => {
    await h.running?.stop();
    h.running = undefined;
  };

  beforeAll(async () => {
    ({ db: h.db, drop } = await openServiceTestDatabase({ schema: def.schema, migrationsDir: def.migrationsDir ?? CONNECTOR_MIGRATIONS_DIR }));
    h.clock = new ManualClock(subject.startAt ?? new Date("2026-01-05T15:00:00.000Z"));
    h.bus = createInProcessBus({ log, retryInitialMs: 10, retryMaxMs: 50 });
    h.outcomes = [];
    outcomeSubscription = await h.bus.subscribe({
      group: "contract-suite.outcomes",
      topics: [RAIL_OUTCOMES_TOPIC],
      async handle(m) {
        const o = fromBinary(RailOutcomeSchema, m.value);
        h.outcomes.push({
          outcomeId: o.eventId,
          platformId: o.platformId,
          transactionId: o.transactionId,
          status: o.status as OutcomeStatus,
          reason: o.reason,
          at: o.occurredAt ? timestampDate(o.occurredAt) : new Date(0),
          expectedSettlementAt: o.expectedSettlementAt ? timestampDate(o.expectedSettlementAt) : undefined,
          connector: o.connector,
          environment: o.environment as RailEnvironment,
          sequence: o.sequence,
        });
      },
    });
    await start();
  });
  afterAll(async () => {
    await stop();
    await outcomeSubscription?.close();
    await h.bus?.close();
    await drop();
  });

  const instruction = (seed: InstructionSeed, over: Partial<RailInstruction> = {}): RailInstruction => ({
    instructionId: newId("Event"),
    occurredAt: h.clock.now(),
    platformId,
    environment,
    connector: def.name,
    transactionId: newId("Transaction"),
    kind: "TRANSFER",
    amount: 12_345n,
    externalAccountId: newId("ExternalAccount"),
    reference: `TXN-${Math.random().toString(36).slice(2, 10).toUpperCase()}`,
    umaAddress: "",
    ...seed,
    ...over,
  });
  const deliver = async (...instructions: RailInstruction[]) => {
    for (const i of instructions) {
      await h.bus.publish([{ topic, key: i.transactionId, value: toBinary(RailInstructionSchema, toWire(i)), headers: { "event-id": i.instructionId, "event-type": `RAIL_${i.direction}` } }]);
    }
  };

  /** Polls (bounded) until `cond` holds, letting the connector's world move between looks. */
  const until = async (what: string, cond: () => Promise<boolean> | boolean) => {
    const deadline = Date.now() + waitMs;
    for (;;) {
      if (await cond()) return;
      if (Date.now() > deadline) throw new Error(`contract suite: timed out waiting for ${what}`);
      if (h.running) await subject.progress?.({ clock: h.clock, db: h.running.db });
      h.running?.nudge();
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  /** Statuses recorded for a transaction, in sequence order (the connector's own record). */
  const recorded = async (transactionId: string): Promise<OutcomeStatus[]> => {
    const rows = await h.db.forSchema<any>(def.schema).selectFrom("connector_outcomes").select(["status", "sequence"]).where("transaction_id", "=", transactionId).orderBy("sequence").execute();
    return rows.map((r: { status: OutcomeStatus }) => r.status);
  };
  const published = (transactionId: string) => h.outcomes.filter((o) => o.transactionId === transactionId).sort((a, b) => a.sequence - b.sequence);
  const instructed = async (instructionId: string) =>
    !!(await h.db.forSchema<any>(def.schema).selectFrom("inbox").select("event_id").where("consumer", "=", `${def.name}.rail-instructions`).where("event_id", "=", instructionId).executeTakeFirst());

  const TERMINAL: Record<keyof ContractSubject["scenarios"], (s: OutcomeStatus[]) => boolean> = {
    completes: (s) => s.includes("COMPLETED"),
    fails: (s) => s.includes("FAILED") || s.includes("REJECTED"),
    returnsAfterCompletion: (s) => s.includes("RETURNED"),
  };
  /** Instructs one transaction of a scenario and waits until its outcomes are published. */
  const run = async (scenario: keyof ContractSubject["scenarios"], over: Partial<RailInstruction> = {}) => {
    const i = instruction(subject.scenarios[scenario], over);
    await deliver(i);
    await until(`${scenario} outcomes of ${i.transactionId}`, () => TERMINAL[scenario](published(i.transactionId).map((o) => o.status)));
    return i;
  };

  describe(`rail contract v1: connector ${def.name}`, () => {
    const reference: Partial<Record<keyof ContractSubject["scenarios"], OutcomeStatus[]>> = {};

    it.each(["completes", "fails", "returnsAfterCompletion"] as const)("reports the %s scenario's outcomes as itself, in its environment, numbered 1, 2, ... per transaction", async (scenario) => {
      const i = await run(scenario);
      const outs = published(i.transactionId);
      expect(outs.map((o) => o.sequence)).toEqual(outs.map((_, n) => n + 1));
      for (const o of outs) {
        expect(o).toMatchObject({ connector: def.name, environment, platformId });
      }
      expect(outs.map((o) => o.status)).toEqual(await recorded(i.transactionId));
      reference[scenario] = outs.map((o) => o.status);
      const end = settle(reference[scenario]!);
      if (scenario === "completes") expect(end).toMatchObject({ status: "COMPLETED", moved: true });
      else expect(end).toMatchObject({ status: "FAILED", moved: false });
    });

    it("acts once on an instruction delivered twice, and ignores a second instruction for the same transaction", async () => {
      const first = instruction(subject.scenarios.completes);
      const second = { ...first, instructionId: newId("Event") };
      await deliver(first, first, second);
      await until("the second instruction to be seen", () => instructed(second.instructionId));
      await until("the outcomes", () => TERMINAL.completes(published(first.transactionId).map((o) => o.status)));
      expect(await recorded(first.transactionId)).toEqual(reference.completes ?? (await run("completes").then((r) => recorded(r.transactionId))));
      expect(published(first.transactionId).map((o) => o.status)).toEqual(await recorded(first.transactionId));
    });

    it("refuses instructions addressed to another connector or another environment, and still acts on the one addressed to it", async () => {
      const right = instruction(subject.scenarios.completes);
      const otherConnector = { ...right, instructionId: newId("Event"), connector: def.name === "someone-else" ? "another-one" : "someone-else" };
      const otherEnvironment = { ...right, instructionId: newId("Event"), environment: (environment === "SANDBOX" ? "PRODUCTION" : "SANDBOX") as RailEnvironment };
      await deliver(otherConnector, otherEnvironment);
      await until("the misaddressed instructions to be seen", async () => (await instructed(otherConnector.instructionId)) && (await instructed(otherEnvironment.instructionId)));
      expect(await recorded(right.transactionId)).toEqual([]);
      await deliver(right);
      await until("the outcomes", () => TERMINAL.completes(published(right.transactionId).map((o) => o.status)));
      expect(await recorded(right.transactionId)).toEqual(reference.completes);
    });

    it("loses and repeats nothing when it crashes in the middle of a batch and restarts with the batch delivered again", async () => {
      const batch = Array.from({ length: 5 }, () => instruction(subject.scenarios.completes));
      const victim = batch[2]!;
      let crashed = false;
      // The first run dies while handling the third instruction, after the connector's own work for it (rolled back).
      const crashing: ConnectorDefinition<S> = {
        ...def,
        async build(ctx) {
          const parts = await def.build(ctx);
          return {
            ...parts,
            async onInstruction(i, trx) {
              await parts.onInstruction(i, trx);
              if (i.transactionId === victim.transactionId && !crashed) {
                crashed = true;
                throw new Error("contract suite: crash in the middle of a batch");
              }
            },
          };
        },
      };
      await stop();
      await start(crashing);
      await deliver(...batch);
      await until("the crash", () => crashed);
      await stop();
      await start();
      // What Kafka does after a crash: everything not committed comes again, some of it already done.
      await deliver(...batch);
      for (const i of batch) await until(`outcomes of ${i.transactionId}`, () => TERMINAL.completes(published(i.transactionId).map((o) => o.status)));
      for (const i of batch) {
        expect(await recorded(i.transactionId)).toEqual(reference.completes);
        expect(published(i.transactionId).map((o) => o.status)).toEqual(reference.completes);
      }
    });

    it("publishes outcomes whose end is the same in whatever order a consumer sees them", async () => {
      for (const scenario of ["completes", "fails", "returnsAfterCompletion"] as const) {
        const i = await run(scenario);
        const statuses = published(i.transactionId).map((o) => o.status);
        // Where the money ends (its status and whether it moved); the path there may differ.
        const end = (order: OutcomeStatus[]) => ({ status: settle(order).status, moved: settle(order).moved });
        const expected = end(statuses);
        for (const order of permutations(statuses)) expect(end(order), `${scenario}: ${order.join(" → ")}`).toEqual(expected);
        // At most one of COMPLETED / FAILED / REJECTED per transaction: the rule that makes the order irrelevant.
        expect(statuses.filter((s) => s === "COMPLETED" || s === "FAILED" || s === "REJECTED").length).toBe(1);
      }
    });

    it("reports a return after completion, after the completion, and the money goes back", async () => {
      const i = await run("returnsAfterCompletion");
      const outs = published(i.transactionId);
      const completed = outs.find((o) => o.status === "COMPLETED");
      const returned = outs.find((o) => o.status === "RETURNED");
      expect(completed, "a COMPLETED outcome before the return").toBeDefined();
      expect(returned!.sequence).toBeGreaterThan(completed!.sequence);
      expect(returned!.at.getTime()).toBeGreaterThanOrEqual(completed!.at.getTime());
      expect(returned!.reason).not.toBe("");
      expect(settle(outs.map((o) => o.status))).toEqual({ status: "FAILED", moved: false, reversed: true });
    });
  });
}

/** Every order of a short list (the suite's outcome lists have a handful of entries). */
function permutations<T>(xs: readonly T[]): T[][] {
  if (xs.length <= 1) return [[...xs]];
  return xs.flatMap((x, i) => permutations([...xs.slice(0, i), ...xs.slice(i + 1)]).map((rest) => [x, ...rest]));
}
