import { create } from "@bufbuild/protobuf";
import { ManualClock, type DatabaseHandle } from "@corridor/kit";
import { openServiceTestDatabase } from "@corridor/kit/testing";
import { LedgerEventSchema } from "@corridor/proto/corridor/ledger/v1/events_pb.js";
import type { Kysely } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { approvalStore, recordAwaitingFromEvent } from "../src/data/incoming-approvals.js";
import type { QuotesFxDatabase } from "../src/data/tables.js";
import { incomingGuardConsumer } from "../src/events/incoming-guard-consumer.js";
import { service } from "../src/server.js";

// The incoming_approvals rows over a real database (Postgres with DATABASE_URL, PGlite otherwise):
// the rows the ledger's event records, how the request path and the worker give them a deadline,
// and which ledger events record one at all.
let handle: DatabaseHandle;
let drop: () => Promise<void>;
let db: Kysely<QuotesFxDatabase>;
const clock = new ManualClock("2026-01-01T00:00:00.000Z");
const P = "Platform:p";

beforeAll(async () => {
  ({ db: handle, drop } = await openServiceTestDatabase(service));
  db = handle.forSchema<QuotesFxDatabase>(service.schema);
});
afterAll(() => drop());
beforeEach(async () => {
  await db.deleteFrom("incoming_approvals").execute();
});

const at = (s: number) => new Date(clock.now().getTime() + s * 1000);
const store = () => approvalStore(db);

describe("incoming_approvals", () => {
  it("a row recorded from the event has no deadline; the request path's add gives it one, once", async () => {
    await recordAwaitingFromEvent(db, { platformId: P, transactionId: "Transaction:a", now: clock.now() });
    expect(await store().awaiting(P, "Transaction:a")).toEqual({ platformId: P, transactionId: "Transaction:a", deadline: null, acknowledged: false, requestedFields: [] });
    await store().add({ platformId: P, transactionId: "Transaction:a", deadline: at(15), acknowledged: false, requestedFields: ["FULL_NAME"] }, clock.now());
    expect(await store().awaiting(P, "Transaction:a")).toMatchObject({ deadline: at(15), requestedFields: ["FULL_NAME"] });
    // A later add (the worker racing the request path) changes nothing.
    await store().add({ platformId: P, transactionId: "Transaction:a", deadline: at(99), acknowledged: false, requestedFields: [] }, clock.now());
    expect((await store().awaiting(P, "Transaction:a"))!.deadline).toEqual(at(15));
  });

  it("the event arriving after the request path recorded (or closed) the row changes nothing", async () => {
    await store().add({ platformId: P, transactionId: "Transaction:b", deadline: at(15), acknowledged: false, requestedFields: [] }, clock.now());
    await store().acknowledge(P, "Transaction:b", at(5), clock.now());
    await recordAwaitingFromEvent(db, { platformId: P, transactionId: "Transaction:b", now: clock.now() });
    expect(await store().awaiting(P, "Transaction:b")).toMatchObject({ deadline: at(5), acknowledged: true });

    await store().add({ platformId: P, transactionId: "Transaction:c", deadline: at(15), acknowledged: false, requestedFields: [] }, clock.now());
    await store().done(P, "Transaction:c", clock.now());
    await recordAwaitingFromEvent(db, { platformId: P, transactionId: "Transaction:c", now: clock.now() });
    expect(await store().awaiting(P, "Transaction:c")).toBeUndefined();
    // A decided row never gains a deadline again either.
    await store().add({ platformId: P, transactionId: "Transaction:c", deadline: at(1), acknowledged: false, requestedFields: [] }, clock.now());
    expect(await store().awaiting(P, "Transaction:c")).toBeUndefined();
  });

  it("the worker sees rows without a deadline first, then the earliest deadlines", async () => {
    await store().add({ platformId: P, transactionId: "Transaction:late", deadline: at(60), acknowledged: true, requestedFields: [] }, clock.now());
    await store().add({ platformId: P, transactionId: "Transaction:soon", deadline: at(1), acknowledged: true, requestedFields: [] }, clock.now());
    await recordAwaitingFromEvent(db, { platformId: P, transactionId: "Transaction:orphan", now: clock.now() });
    expect((await store().allAwaiting(10)).map((a) => a.transactionId)).toEqual(["Transaction:orphan", "Transaction:soon", "Transaction:late"]);
    expect((await store().allAwaiting(1)).map((a) => a.transactionId)).toEqual(["Transaction:orphan"]);
  });

  describe("the consumer of the ledger's events", () => {
    const consumer = incomingGuardConsumer(clock);
    const event = (eventType: string, t: { id: string; type: string; status: string; sourceType: string }) =>
      create(LedgerEventSchema, {
        eventId: `Event:${t.id}:${eventType}`,
        platformId: P,
        eventType,
        payload: { case: "transactionChanged", value: { transaction: { id: t.id, type: t.type, status: t.status, source: { type: t.sourceType } } } },
      });
    const handle = (e: ReturnType<typeof event>) => db.transaction().execute((trx) => consumer.handle(e, trx));

    it("records a PENDING incoming UMA payment, and nothing for any other transaction event", async () => {
      await handle(event("INCOMING_PAYMENT_PENDING", { id: "Transaction:uma", type: "INCOMING", status: "PENDING", sourceType: "UMA_ADDRESS" }));
      await handle(event("INCOMING_PAYMENT_PENDING", { id: "Transaction:bank", type: "INCOMING", status: "PENDING", sourceType: "ACCOUNT" }));
      await handle(event("OUTGOING_PAYMENT_PENDING", { id: "Transaction:out", type: "OUTGOING", status: "PENDING", sourceType: "ACCOUNT" }));
      await handle(event("INCOMING_PAYMENT_COMPLETED", { id: "Transaction:done", type: "INCOMING", status: "COMPLETED", sourceType: "UMA_ADDRESS" }));
      expect((await store().allAwaiting(10)).map((a) => [a.transactionId, a.deadline])).toEqual([["Transaction:uma", null]]);
    });
  });
});
