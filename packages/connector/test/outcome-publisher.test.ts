import { ManualClock, inTransaction, migrateSchema, newId, type DatabaseHandle } from "@corridor/kit";
import { openTestDatabase } from "@corridor/kit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONNECTOR_MIGRATIONS_DIR, createOutcomePublisher, instructionConsumer, toWire } from "../src/runtime.js";
import type { RailInstruction } from "../src/contract.js";
import { register } from "tsx/esm/api";
import { PostgresQueryCompiler, type KyselyPlugin } from "kysely";

describe("outcome publisher", () => {
  let db: DatabaseHandle;
  let drop: () => Promise<void>;
  const clock = new ManualClock("2026-01-05T15:00:00.000Z");
  beforeAll(async () => {
    register();
    ({ db, drop } = await openTestDatabase({ poolSize: 6 }));
    await migrateSchema(db, "connector_publisher_test", CONNECTOR_MIGRATIONS_DIR);
  });
  afterAll(async () => drop?.());

  it("numbers a transaction's outcomes 1, 2, ... even when several transactions report on it at once", async () => {
    const schema = db.forSchema<any>("connector_publisher_test");
    const publisher = createOutcomePublisher({ connector: "test-bank", clock });
    const platformId = newId("Platform");
    const transactionId = newId("Transaction");
    const statuses = ["PROCESSING", "COMPLETED", "RETURNED", "PROCESSING", "COMPLETED", "RETURNED"] as const;
    await Promise.all(statuses.map((status) => inTransaction(schema, (trx) => publisher.report(trx, { platformId, transactionId, status, at: clock.now() }))));
    const rows = await schema.selectFrom("connector_outcomes").select("sequence").where("transaction_id", "=", transactionId).orderBy("sequence").execute();
    expect(rows.map((r: { sequence: number }) => r.sequence)).toEqual([1, 2, 3, 4, 5, 6]);
    const outbox = await schema.selectFrom("outbox").select(["topic", "key"]).execute();
    expect(outbox.filter((r: { key: string }) => r.key === transactionId)).toHaveLength(6);
    expect(new Set(outbox.map((r: { topic: string }) => r.topic))).toEqual(new Set(["corridor.rail-outcomes.v1"]));
  });

  it("takes a transaction's outcome lock once per database transaction, however many outcomes it reports there", async () => {
    const compiler = new PostgresQueryCompiler();
    const sent: string[] = [];
    const counting: KyselyPlugin = {
      transformQuery: ({ node, queryId }) => {
        sent.push(compiler.compileQuery(node, queryId).sql);
        return node;
      },
      transformResult: async ({ result }) => result,
    };
    const schema = db.forSchema<any>("connector_publisher_test").withPlugin(counting);
    const publisher = createOutcomePublisher({ connector: "test-bank", clock });
    const platformId = newId("Platform");
    const transactionId = newId("Transaction");
    await inTransaction(schema, async (trx) => {
      await publisher.report(trx, { platformId, transactionId, status: "PROCESSING", at: clock.now() });
      await publisher.report(trx, { platformId, transactionId, status: "COMPLETED", at: clock.now() });
    });
    expect(sent.filter((q) => q.includes("pg_advisory_xact_lock"))).toHaveLength(1);
    const rows = await schema.selectFrom("connector_outcomes").select(["sequence", "status"]).where("transaction_id", "=", transactionId).orderBy("sequence").execute();
    expect(rows.map((r: { sequence: number; status: string }) => [r.sequence, r.status])).toEqual([
      [1, "PROCESSING"],
      [2, "COMPLETED"],
    ]);
    // The next database transaction takes it again.
    sent.length = 0;
    await inTransaction(schema, (trx) => publisher.report(trx, { platformId, transactionId, status: "RETURNED", at: clock.now() }));
    expect(sent.filter((q) => q.includes("pg_advisory_xact_lock"))).toHaveLength(1);
  });

  it("refuses a status the contract does not know, writing nothing", async () => {
    const schema = db.forSchema<any>("connector_publisher_test");
    const publisher = createOutcomePublisher({ connector: "test-bank", clock });
    const transactionId = newId("Transaction");
    await expect(inTransaction(schema, (trx) => publisher.report(trx, { platformId: newId("Platform"), transactionId, status: "SETTLED" as never, at: clock.now() }))).rejects.toThrow(/unknown rail outcome status/);
    expect(await schema.selectFrom("connector_outcomes").select("sequence").where("transaction_id", "=", transactionId).execute()).toEqual([]);
  });

  // Rail contract 1.3: RETURN instructions reach only connectors that declare they send returns.
  const returnInstruction = (): RailInstruction => ({
    instructionId: newId("Event"),
    occurredAt: clock.now(),
    platformId: "",
    environment: "PRODUCTION",
    connector: "test-bank",
    transactionId: newId("Transaction"),
    direction: "PAYOUT",
    kind: "RETURN",
    amount: 4_321n,
    currency: "USD",
    paymentRail: "ACH",
    externalAccountId: "",
    accountInfo: {},
    reference: "RETURN WRONG BANK",
    umaAddress: "",
    returnedCredit: {
      bankEntryId: "260102-1234567890-1-091000010000001",
      reason: "R23",
      paymentRail: "ACH",
      senderName: "ACME PAYROLL",
      senderAccount: "1234567890",
      senderRouting: "09100001",
      reference: "WRONG BANK",
      creditedAccount: "9876543210",
      creditedRouting: "021000021",
      valueDate: "2026-01-02",
      suspenseItemId: newId("RailNotice"),
    },
  });
  const silentLog = { error: () => {}, warn: () => {}, info: () => {}, debug: () => {}, child: () => silentLog } as never;

  it("a RETURN instruction to a connector that sends no returns is answered REJECTED RETURN_NOT_SUPPORTED (no platform needed), never handed over", async () => {
    const schema = db.forSchema<any>("connector_publisher_test");
    const handed: RailInstruction[] = [];
    const outcomes = createOutcomePublisher({ connector: "test-bank", clock });
    const consumer = instructionConsumer({ connector: "test-bank", onInstruction: async (i) => void handed.push(i), log: silentLog, clock, outcomes });
    const i = returnInstruction();
    await inTransaction(schema, (trx) => consumer.handle(toWire(i), trx as never));
    expect(handed).toEqual([]);
    const rows = await schema.selectFrom("connector_outcomes").select(["status", "reason", "platform_id"]).where("transaction_id", "=", i.transactionId).execute();
    expect(rows).toEqual([{ status: "REJECTED", reason: "RETURN_NOT_SUPPORTED", platform_id: "" }]);
  });

  it("a connector that sends returns gets the RETURN instruction with the returned credit, once", async () => {
    const schema = db.forSchema<any>("connector_publisher_test");
    const handed: RailInstruction[] = [];
    const consumer = instructionConsumer({ connector: "test-bank", onInstruction: async (i) => void handed.push(i), log: silentLog, clock, returns: true, outcomes: createOutcomePublisher({ connector: "test-bank", clock }) });
    const i = returnInstruction();
    await inTransaction(schema, (trx) => consumer.handle(toWire(i), trx as never));
    await inTransaction(schema, (trx) => consumer.handle(toWire({ ...i, instructionId: newId("Event") }), trx as never));
    expect(handed).toHaveLength(1);
    expect(handed[0]).toMatchObject({ kind: "RETURN", direction: "PAYOUT", amount: 4_321n, returnedCredit: i.returnedCredit });
    expect(await schema.selectFrom("connector_outcomes").select("status").where("transaction_id", "=", i.transactionId).execute()).toEqual([]);
  });
});
