import { create, fromBinary } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { createClient, createRouterTransport } from "@connectrpc/connect";
import { ManualClock, appErrorInterceptor, createLogger, inTransaction, newId, topics, type DatabaseHandle } from "@corridor/kit";
import { RailInstructionSchema, RailOutcomeSchema } from "@corridor/proto/corridor/ledger/v1/rails_pb.js";
import { SandboxEventSchema } from "@corridor/proto/corridor/sandbox/v1/events_pb.js";
import { SandboxService } from "@corridor/proto/corridor/sandbox/v1/sandbox_service_pb.js";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStore } from "../src/data/store.js";
import { buildSandbox, service } from "../src/server.js";
import { openServiceTestDatabase } from "@corridor/kit/testing";
import { createOutcomePublisher } from "@corridor/connector";

describe("sandbox rail simulator", () => {
  let db: DatabaseHandle;
  let drop: () => Promise<void>;
  const clock = new ManualClock("2026-01-01T00:00:00.000Z");
  const log = createLogger("sandbox-test", "silent");

  beforeAll(async () => {
    ({ db, drop } = await openServiceTestDatabase(service));
  });
  afterAll(async () => drop?.());

  /** A fresh build of the service on the same database: what a restart gives. */
  function boot() {
    const built = buildSandbox({ db, clock, log, env: {} });
    const client = createClient(SandboxService, createRouterTransport((r) => built.routes(r), { router: { interceptors: [appErrorInterceptor] } }));
    const instruct = async (platformId: string, accountNumber: string, opts: { kind?: string; umaAddress?: string; occurredAt?: Date } = {}) => {
      const transactionId = newId("Transaction");
      const msg = create(RailInstructionSchema, {
        eventId: newId("Event"),
        occurredAt: timestampFromDate(opts.occurredAt ?? clock.now()),
        platformId,
        transactionId,
        direction: "PAYOUT",
        amount: 100n,
        currency: "USD",
        accountInfo: opts.umaAddress ? undefined : { accountType: "USD_ACCOUNT", accountNumber },
        kind: opts.kind ?? "",
        umaAddress: opts.umaAddress ?? "",
      });
      await db.forSchema<any>(service.schema).transaction().execute((trx) => built.consumers[0]!.handle(msg, trx));
      return transactionId;
    };
    return { built, client, instruct };
  }

  async function outcomeMessages(transactionId: string) {
    const rows = await db.forSchema<any>(service.schema).selectFrom("outbox").select("payload").where("topic", "=", topics.railOutcomes).orderBy("id").execute();
    return rows.map((r: { payload: Uint8Array }) => fromBinary(RailOutcomeSchema, r.payload)).filter((o) => o.transactionId === transactionId);
  }

  async function outcomes(transactionId: string) {
    const rows = await db.forSchema<any>(service.schema).selectFrom("outbox").select("payload").where("topic", "=", topics.railOutcomes).orderBy("id").execute();
    return rows
      .map((r: { payload: Uint8Array }) => fromBinary(RailOutcomeSchema, r.payload))
      .filter((o) => o.transactionId === transactionId)
      .map((o) => `${o.status}${o.reason ? `:${o.reason}` : ""}`);
  }

  it.each([
    ["002", ["FAILED:INSUFFICIENT_FUNDS"]],
    ["003", ["FAILED:ACCOUNT_CLOSED"]],
    ["004", ["PROCESSING", "REJECTED:BANK_REJECTED"]],
    ["000", ["PROCESSING", "COMPLETED"]],
    ["999", ["PROCESSING", "COMPLETED"]],
  ])("answers an account number ending in %s at once with %j", async (suffix, expected) => {
    const { instruct } = boot();
    const tx = await instruct(newId("Platform"), `123456${suffix}`);
    expect(await outcomes(tx)).toEqual(expected);
  });

  it("announces every clock advance on corridor.sandbox.v1 (ClockAdvanced: the platform's new sandbox time and offset), in the advance's transaction", async () => {
    const { client } = boot();
    const platformId = newId("Platform");
    const clockEvents = async () => {
      const rows = await db.forSchema<any>(service.schema).selectFrom("outbox").select(["payload", "key"]).where("topic", "=", topics.sandbox).orderBy("id").execute();
      return rows.map((r: { payload: Uint8Array; key: string }) => ({ key: r.key, event: fromBinary(SandboxEventSchema, r.payload) })).filter((e) => e.event.platformId === platformId);
    };
    await client.advanceClock({ platformId, seconds: 301n });
    await client.advanceClock({ platformId, seconds: 60n });
    const events = await clockEvents();
    expect(events.map((e) => e.key)).toEqual([platformId, platformId]);
    const last = events[1]!.event.payload;
    expect(last.case).toBe("clockAdvanced");
    if (last.case !== "clockAdvanced") return;
    expect(last.value.offsetMs).toBe(361_000n);
    expect(timestampDate(last.value.now!).getTime()).toBe(clock.now().getTime() + 361_000);
    // A refused advance announces nothing.
    await expect(client.advanceClock({ platformId, seconds: 0n })).rejects.toThrow();
    expect(await clockEvents()).toHaveLength(2);
  });

  it("keeps suffix 005 pending for 30 sandbox seconds, then fails it", async () => {
    const { instruct, client } = boot();
    const platformId = newId("Platform");
    const tx = await instruct(platformId, "123456005");
    expect(await outcomes(tx)).toEqual(["PROCESSING"]);
    expect((await client.advanceClock({ platformId, seconds: 29n })).fired).toBe(0);
    expect(await outcomes(tx)).toEqual(["PROCESSING"]);
    const moved = await client.advanceClock({ platformId, seconds: 1n });
    expect(moved.fired).toBe(1);
    expect(moved.offsetSeconds).toBe(30n);
    expect((await client.getClock({ platformId })).offsetSeconds).toBe(30n);
    expect(await outcomes(tx)).toEqual(["PROCESSING", "FAILED:TIMED_OUT"]);
    expect((await client.advanceClock({ platformId, seconds: 100n })).fired).toBe(0); // fired once only
  });

  it("times a delay from when the payment was made: a clock advance the bus delivered the instruction after still counts", async () => {
    const { instruct, client } = boot();
    const platformId = newId("Platform");
    const made = clock.now();
    clock.advance(100);
    // The platform moves its clock before the instruction reaches the sandbox.
    expect((await client.advanceClock({ platformId, seconds: 31n })).fired).toBe(0);
    clock.advance(100);
    const tx = await instruct(platformId, "123456005", { occurredAt: made });
    expect(await outcomes(tx)).toEqual(["PROCESSING", "FAILED:TIMED_OUT"]);
    // Made after that advance, a payment waits its 30 sandbox seconds from then.
    const later = await instruct(platformId, "223456005");
    expect(await outcomes(later)).toEqual(["PROCESSING"]);
    expect((await client.advanceClock({ platformId, seconds: 30n })).fired).toBe(1);
    expect(await outcomes(later)).toEqual(["PROCESSING", "FAILED:TIMED_OUT"]);
  });

  it("moves only the calling platform's clock", async () => {
    const { instruct, client } = boot();
    const a = newId("Platform");
    const b = newId("Platform");
    const txB = await instruct(b, "777000005");
    await client.advanceClock({ platformId: a, seconds: 60n });
    expect(await outcomes(txB)).toEqual(["PROCESSING"]);
  });

  it("keeps the schedule across a restart and fires it from the worker when real time catches up", async () => {
    const first = boot();
    const platformId = newId("Platform");
    const tx = await first.instruct(platformId, "555000005");
    // "Restart": a new build on the same database; its worker finds the pending action.
    const second = boot();
    clock.advance(31_000);
    const worker = second.built.workers[0]!;
    worker.start();
    await expect.poll(() => outcomes(tx), { timeout: 5_000 }).toEqual(["PROCESSING", "FAILED:TIMED_OUT"]);
    await worker.stop();
  });

  it("tells the schedule worker about an action once its transaction commits, never before and never after a rollback", async () => {
    const schema = db.forSchema<any>(service.schema);
    const signals: string[] = [];
    let stage = "";
    const store = createStore(schema, createOutcomePublisher({ connector: "sandbox", clock }), { onScheduled: () => signals.push(stage) });
    const platformId = newId("Platform");
    const action = { platformId, dueAt: new Date(clock.now().getTime() + 60_000), payload: { transactionId: newId("Transaction"), status: "COMPLETED", reason: "" }, now: clock.now() };
    await inTransaction(schema, async (trx) => {
      stage = "inside";
      await store.within(trx).scheduleOutcome(action);
      stage = "committed";
    });
    expect(signals).toEqual(["committed"]);
    await expect(
      inTransaction(schema, async (trx) => {
        await store.within(trx).scheduleOutcome(action);
        throw new Error("rolled back");
      }),
    ).rejects.toThrow("rolled back");
    expect(signals).toEqual(["committed"]);
    expect(await store.anyPending()).toBe(true);
  });

  it("refuses to move the clock by less than 1 second or more than 30 days", async () => {
    const { client } = boot();
    await expect(client.advanceClock({ platformId: newId("Platform"), seconds: 0n })).rejects.toThrow(/seconds/);
    await expect(client.advanceClock({ platformId: newId("Platform"), seconds: 2_592_001n })).rejects.toThrow(/seconds/);
  });

  describe("quote payouts", () => {
    it.each([
      ["002", ["FAILED:EXECUTION_FAILED"]],
      ["004", ["FAILED:COUNTERPARTY_DELIVERY_FAILED", "REFUND_COMPLETED"]],
      ["006", ["FAILED:USER_CANCELLED", "REFUND_COMPLETED"]],
      ["007", ["FAILED:PAYOUT_FAILED", "REFUND_FAILED"]],
      ["000", ["COMPLETED"]],
      ["009", ["COMPLETED"]],
    ])("answers an account number ending in %s at once with %j", async (suffix, expected) => {
      const { instruct } = boot();
      const tx = await instruct(newId("Platform"), `123456${suffix}`, { kind: "QUOTE_PAYOUT" });
      expect(await outcomes(tx)).toEqual(expected);
    });

    it("completes suffix 003 only after 6 sandbox minutes", async () => {
      const { instruct, client } = boot();
      const platformId = newId("Platform");
      const tx = await instruct(platformId, "123456003", { kind: "QUOTE_PAYOUT" });
      expect(await outcomes(tx)).toEqual(["PROCESSING"]);
      await client.advanceClock({ platformId, seconds: 359n });
      expect(await outcomes(tx)).toEqual(["PROCESSING"]);
      await client.advanceClock({ platformId, seconds: 1n });
      expect(await outcomes(tx)).toEqual(["PROCESSING", "COMPLETED"]);
    });

    it("completes suffix 005, then returns it 60 sandbox seconds later and refunds it", async () => {
      const { instruct, client } = boot();
      const platformId = newId("Platform");
      const tx = await instruct(platformId, "123456005", { kind: "QUOTE_PAYOUT" });
      expect(await outcomes(tx)).toEqual(["COMPLETED"]);
      expect((await client.advanceClock({ platformId, seconds: 60n })).fired).toBe(2);
      expect(await outcomes(tx)).toEqual(["COMPLETED", "RETURNED:RETURNED_BY_RECEIVING_BANK", "REFUND_COMPLETED"]);
    });

    it("drives UMA payouts by the address scenario", async () => {
      const { instruct, client } = boot();
      const platformId = newId("Platform");
      const ok = await instruct(platformId, "", { kind: "QUOTE_PAYOUT", umaAddress: "$success.eur@sandbox.uma.money" });
      const fail = await instruct(platformId, "", { kind: "QUOTE_PAYOUT", umaAddress: "$fail.compliance.usd@sandbox.uma.money" });
      const slow = await instruct(platformId, "", { kind: "QUOTE_PAYOUT", umaAddress: "$pending.long.usd@sandbox.uma.money" });
      expect(await outcomes(ok)).toEqual(["COMPLETED"]);
      expect(await outcomes(fail)).toEqual(["FAILED:COMPLIANCE_FAILED", "REFUND_COMPLETED"]);
      // A delayed schedule announces itself at once (PROCESSING with the expected settlement).
      expect(await outcomes(slow)).toEqual(["PROCESSING"]);
      await client.advanceClock({ platformId, seconds: 23n * 3600n });
      expect(await outcomes(slow)).toEqual(["PROCESSING"]);
      await client.advanceClock({ platformId, seconds: 3600n });
      expect(await outcomes(slow)).toEqual(["PROCESSING", "COMPLETED"]);
    });

    it("stamps every outcome with when the schedule reaches the payment's outcome (issue 10: settledAt while in flight)", async () => {
      const { instruct, client } = boot();
      const platformId = newId("Platform");
      const slow = await instruct(platformId, "123456003", { kind: "QUOTE_PAYOUT" });
      const [processing] = await outcomeMessages(slow);
      const expected = timestampDate(processing!.expectedSettlementAt!).getTime();
      expect(expected - timestampDate(processing!.occurredAt!).getTime()).toBe(360_000);
      await client.advanceClock({ platformId, seconds: 360n });
      const done = (await outcomeMessages(slow))[1]!;
      expect(done.status).toBe("COMPLETED");
      expect(timestampDate(done.expectedSettlementAt!).getTime()).toBe(expected);
      const failing = await instruct(platformId, "123456005");
      const [accepted] = await outcomeMessages(failing);
      expect(timestampDate(accepted!.expectedSettlementAt!).getTime() - timestampDate(accepted!.occurredAt!).getTime()).toBe(30_000);
    });

    it("keeps the transfer table for transfer instructions (no kind)", async () => {
      const { instruct } = boot();
      const tx = await instruct(newId("Platform"), "123456002");
      expect(await outcomes(tx)).toEqual(["FAILED:INSUFFICIENT_FUNDS"]);
    });
  });
});
