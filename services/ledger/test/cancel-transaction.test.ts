import { createOutboxRelay, createProcessLogger, type Bus } from "@corridor/kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { service } from "../src/server.js";
import { publicError, startLedgerHarness, usdInfo, type LedgerHarness } from "./harness.js";

/**
 * POST /transactions/{id}/cancel at the ledger (issue 27): a transfer is cancellable until its rail
 * instruction leaves the outbox, and exactly one of (cancel, hand-off) and of (cancel, cancel)
 * wins; the hold is released once. With DATABASE_URL these run on a real PostgreSQL server (several
 * connections: the races are real); without, on PGlite (serialised).
 */
describe("ledger: cancelling a transaction the rail does not have yet", () => {
  let h: LedgerHarness;
  const published: { topic: string; key: string }[] = [];
  // The hand-off: the kit's outbox relay, publishing to a bus that records what it got.
  const bus = {
    async publish(messages: { topic: string; key: string }[]) {
      for (const m of messages) published.push({ topic: m.topic, key: m.key });
    },
  } as unknown as Bus;
  let relay: ReturnType<typeof createOutboxRelay>;

  beforeAll(async () => {
    h = await startLedgerHarness();
    relay = createOutboxRelay({ db: h.db.forSchema<any>(service.schema), bus, log: createProcessLogger("cancel-test", "silent") });
  });
  afterAll(async () => {
    await h?.close();
  });

  async function fundedPlatform(amount = 100_000n) {
    const platformId = await h.newPlatform();
    const { accounts } = await h.ledger.listInternalAccounts({ platformId, owner: "PLATFORM", currency: "USD" });
    const account = accounts[0]!.id;
    await h.ledger.fundInternalAccount({ platformId, accountId: account, amount });
    const ext = (await h.ledger.createExternalAccount({ platformId, owner: "PLATFORM", currency: "USD", accountInfo: usdInfo() })).account!.id;
    await relay.flush(); // whatever setting up produced is out: only the transfer's instruction waits
    return { platformId, account, ext };
  }
  const transferOut = async (p: { platformId: string; account: string; ext: string }, amount: bigint) =>
    (await h.ledger.transferOut({ transfer: { platformId: p.platformId, sourceAccountId: p.account, destinationAccountId: p.ext, amount } })).result!.transaction!;
  const balanceOf = async (p: { platformId: string; account: string }) => (await h.ledger.getInternalAccount({ platformId: p.platformId, accountId: p.account })).account!;
  const failedEvents = async (transactionId: string) =>
    (await h.ledgerEvents()).filter((e) => e.eventType === "OUTGOING_PAYMENT_FAILED" && e.payload.case === "transactionChanged" && e.payload.value.transaction?.id === transactionId);
  const instructionsOf = (transactionId: string) => published.filter((m) => m.key === transactionId && m.topic.startsWith("corridor.rail"));

  it("cancels a PENDING transfer-out before the hand-off: the instruction never leaves, the hold is released, FAILED CANCELLED with its event", async () => {
    const p = await fundedPlatform();
    const tx = await transferOut(p, 2_500n);
    const before = await balanceOf(p);
    const res = await h.ledger.cancelTransaction({ platformId: p.platformId, transactionId: tx.id, reason: "REQUESTED_AFTER_HOURS" });
    expect(res.transaction).toMatchObject({ status: "FAILED", failureReason: "OFFRAMP_FAILED", failureDetail: "CANCELLED" });
    await relay.flush();
    expect(instructionsOf(tx.id)).toEqual([]);
    const after = await balanceOf(p);
    expect(before.held).toBe(2_500n);
    expect(after).toMatchObject({ balance: before.balance, held: 0n, available: before.balance });
    expect((await failedEvents(tx.id)).length).toBe(1);
    // Again: the rail never had it, but it is final now.
    const again = await publicError(h.ledger.cancelTransaction({ platformId: p.platformId, transactionId: tx.id }));
    expect(again.code).toBe("TRANSACTION_NOT_CANCELLABLE");
  });

  it("refuses once the instruction was handed to the bus (409 TRANSACTION_NOT_CANCELLABLE, still held)", async () => {
    const p = await fundedPlatform(10_000n);
    const tx = await transferOut(p, 4_000n);
    await relay.flush();
    expect(instructionsOf(tx.id).length).toBe(1);
    const refusal = await publicError(h.ledger.cancelTransaction({ platformId: p.platformId, transactionId: tx.id }));
    expect(refusal).toMatchObject({ code: "TRANSACTION_NOT_CANCELLABLE" });
    expect((await h.ledger.getTransaction({ platformId: p.platformId, transactionId: tx.id })).transaction!.status).toBe("PENDING");
    // The hold still stands: only 6,000 of 10,000 can go out.
    expect((await publicError(h.ledger.transferOut({ transfer: { platformId: p.platformId, sourceAccountId: p.account, destinationAccountId: p.ext, amount: 6_001n } }))).code).toBe("INSUFFICIENT_BALANCE");
    expect((await failedEvents(tx.id)).length).toBe(0);
  });

  it("cancel racing the hand-off: exactly one wins, every time, and the hold is released only when the cancel won", async () => {
    let cancelled = 0;
    let handedOff = 0;
    for (let i = 0; i < 12; i++) {
      const p = await fundedPlatform(1_000n);
      const tx = await transferOut(p, 1_000n);
      // The relay starts 0 to 11 ms after the cancel: the interleavings vary (either may win);
      // what must hold is the same for every one of them.
      const handOff = new Promise((resolve) => setTimeout(resolve, i)).then(() => relay.flush());
      const [cancel] = await Promise.allSettled([h.ledger.cancelTransaction({ platformId: p.platformId, transactionId: tx.id }), handOff]);
      await relay.flush();
      const out = instructionsOf(tx.id).length;
      const status = (await h.ledger.getTransaction({ platformId: p.platformId, transactionId: tx.id })).transaction!.status;
      // A second transfer of the whole amount tells whether the 1,000 are still held.
      const probe = await h.ledger.transferOut({ transfer: { platformId: p.platformId, sourceAccountId: p.account, destinationAccountId: p.ext, amount: 1_000n } }).then(
        () => "free",
        () => "held",
      );
      if (cancel.status === "fulfilled") {
        cancelled++;
        expect(out).toBe(0);
        expect(status).toBe("FAILED");
        expect(probe).toBe("free");
        expect((await failedEvents(tx.id)).length).toBe(1);
      } else {
        handedOff++;
        expect((await publicError(Promise.reject(cancel.reason))).code).toBe("TRANSACTION_NOT_CANCELLABLE");
        expect(out).toBe(1);
        expect(status).toBe("PENDING");
        expect(probe).toBe("held");
        expect((await failedEvents(tx.id)).length).toBe(0);
      }
    }
    expect(cancelled + handedOff).toBe(12);
  });

  it("two cancels racing: one answers the FAILED transaction, the other 409; the hold is released once", async () => {
    for (let i = 0; i < 8; i++) {
      const p = await fundedPlatform(3_000n);
      const tx = await transferOut(p, 2_000n);
      const results = await Promise.allSettled([
        h.ledger.cancelTransaction({ platformId: p.platformId, transactionId: tx.id }),
        h.ledger.cancelTransaction({ platformId: p.platformId, transactionId: tx.id }),
      ]);
      expect(results.filter((r) => r.status === "fulfilled").length).toBe(1);
      const rejected = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
      expect((await publicError(Promise.reject(rejected.reason))).code).toBe("TRANSACTION_NOT_CANCELLABLE");
      expect(await balanceOf(p)).toMatchObject({ balance: 3_000n, held: 0n, available: 3_000n });
      // Released once: all 3,000 can go out, not more (a double release would free 5,000).
      expect((await publicError(h.ledger.transferOut({ transfer: { platformId: p.platformId, sourceAccountId: p.account, destinationAccountId: p.ext, amount: 3_001n } }))).code).toBe("INSUFFICIENT_BALANCE");
      await h.ledger.transferOut({ transfer: { platformId: p.platformId, sourceAccountId: p.account, destinationAccountId: p.ext, amount: 3_000n } });
      expect((await failedEvents(tx.id)).length).toBe(1);
      await relay.flush();
      expect(instructionsOf(tx.id)).toEqual([]);
    }
  });

  it("records a receipt delivery confirmation, now or at the time given, and replaces it when called again", async () => {
    const p = await fundedPlatform();
    const tx = await transferOut(p, 100n);
    const first = (await h.ledger.confirmReceiptDelivery({ platformId: p.platformId, transactionId: tx.id })).transaction!;
    expect(first.receiptDeliveryConfirmedAt).toBeDefined();
    const at = new Date("2026-01-01T00:00:05.000Z");
    const second = (await h.ledger.confirmReceiptDelivery({ platformId: p.platformId, transactionId: tx.id, confirmedAt: { seconds: BigInt(at.getTime() / 1000), nanos: 0 } as never })).transaction!;
    expect(Number(second.receiptDeliveryConfirmedAt!.seconds)).toBe(at.getTime() / 1000);
    expect((await publicError(h.ledger.confirmReceiptDelivery({ platformId: p.platformId, transactionId: "Transaction:019542f5-b3e7-1d02-0000-000000000004" }))).code).toBe("TRANSACTION_NOT_FOUND");
  });
});
