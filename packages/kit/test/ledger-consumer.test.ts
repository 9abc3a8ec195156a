import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { LedgerEventSchema } from "@corridor/proto/corridor/ledger/v1/events_pb.js";
import { describe, expect, it } from "vitest";
import { ledgerTransactionConsumer, type LedgerTransactionChange } from "../src/ledger-consumer.js";
import { topics } from "../src/topics.js";

describe("ledgerTransactionConsumer", () => {
  it("hands over the transaction changes it accepts, with their time, and ignores other events", async () => {
    const seen: LedgerTransactionChange[] = [];
    const consumer = ledgerTransactionConsumer({ name: "t", topics: [topics.ledgerQuoteTransactions], accepts: (t) => t.quoteId !== "", handle: async (_trx, c) => void seen.push(c) });
    expect(consumer.topic).toEqual([topics.ledgerQuoteTransactions]);
    expect(consumer.formerTopics).toEqual([topics.ledger]);
    const at = new Date("2025-10-13T00:00:00Z");
    const changed = (quoteId: string) =>
      create(LedgerEventSchema, { eventId: `e-${quoteId}`, platformId: "p", occurredAt: timestampFromDate(at), payload: { case: "transactionChanged", value: { transaction: { id: "t1", quoteId } } } });
    await consumer.handle(changed("q1"), {} as never);
    await consumer.handle(changed(""), {} as never);
    await consumer.handle(create(LedgerEventSchema, { eventId: "b", payload: { case: "balanceUpdated", value: {} } }), {} as never);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ eventId: "e-q1", platformId: "p", occurredAt: at, transaction: { id: "t1", quoteId: "q1" } });
    expect(consumer.eventId(changed("q1"))).toBe("e-q1");
  });
});
