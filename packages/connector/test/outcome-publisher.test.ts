import { ManualClock, inTransaction, migrateSchema, newId, type DatabaseHandle } from "@corridor/kit";
import { openTestDatabase } from "@corridor/kit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONNECTOR_MIGRATIONS_DIR, createOutcomePublisher } from "../src/runtime.js";
import { register } from "tsx/esm/api";

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

  it("refuses a status the contract does not know, writing nothing", async () => {
    const schema = db.forSchema<any>("connector_publisher_test");
    const publisher = createOutcomePublisher({ connector: "test-bank", clock });
    const transactionId = newId("Transaction");
    await expect(inTransaction(schema, (trx) => publisher.report(trx, { platformId: newId("Platform"), transactionId, status: "SETTLED" as never, at: clock.now() }))).rejects.toThrow(/unknown rail outcome status/);
    expect(await schema.selectFrom("connector_outcomes").select("sequence").where("transaction_id", "=", transactionId).execute()).toEqual([]);
  });
});
