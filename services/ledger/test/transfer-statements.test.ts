import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { newId } from "@corridor/kit";
import { RailOutcomeSchema } from "@corridor/proto/corridor/ledger/v1/rails_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { countingDatabase, startLedgerHarness, usdInfo, type LedgerHarness, type StatementCounts } from "./harness.js";

/**
 * Issue 28 item 2: how many statements and transactions the ledger sends to its database for one
 * transfer-out, to the answer and then through its rail outcome, counted at the schema's Kysely
 * handle (BEGIN and COMMIT not counted as statements; the in-process fakes of auth-sessions and
 * customers-kyc send none). The bounds are the counts after the change (docs/benchmarks.md, "The
 * ledger's statements per transfer"): a regression guard, not a speed test. Counted after a first
 * transfer of the platform, as in a running service (its environment and system accounts known).
 */
describe("statements per transfer-out (regression guard)", () => {
  let h: LedgerHarness;
  let counter: ReturnType<typeof countingDatabase>;
  let w: { platformId: string; customerId: string; account: string; ext: string };

  beforeAll(async () => {
    h = await startLedgerHarness({
      wrapDb: (db) => {
        counter = countingDatabase(db);
        return counter.db;
      },
    });
    const platformId = await h.newPlatform();
    const customerId = await h.newCustomer(platformId);
    const account = (await h.ledger.listInternalAccounts({ platformId, owner: "CUSTOMER", customerId, currency: "USD" })).accounts.find((a) => a.type === "INTERNAL_FIAT")!.id;
    const ext = (await h.ledger.createExternalAccount({ platformId, owner: "CUSTOMER", customerId, currency: "USD", accountInfo: usdInfo() })).account!.id;
    await h.ledger.fundInternalAccount({ platformId, accountId: account, amount: 1_000_000n });
    w = { platformId, customerId, account, ext };
    // The platform's first transfer and outcomes (the environment and the clearing account become known).
    const first = await out(100n, "warm-up");
    await h.outcome(platformId, first, "COMPLETED");
  });
  afterAll(async () => h?.close());

  async function out(amount: bigint, idempotencyKey: string): Promise<string> {
    const res = await h.ledger.transferOut({ transfer: { platformId: w.platformId, sourceAccountId: w.account, destinationAccountId: w.ext, amount, idempotencyKey, customerId: w.customerId } });
    return res.result!.transaction!.id;
  }

  async function counted<T>(fn: () => Promise<T>): Promise<{ value: T; counts: StatementCounts }> {
    counter.reset();
    const value = await fn();
    return { value, counts: { ...counter.counts } };
  }

  it("answers a transfer-out (idempotency key, customer agent checks, hold, transaction, outbox) within its bound", async () => {
    const { value: id, counts } = await counted(() => out(2_500n, "count-1"));
    expect(id).toMatch(/^Transaction:/);
    expect(counts, JSON.stringify(counts)).toEqual({ statements: expect.any(Number), transactions: 1 });
    expect(counts.statements, JSON.stringify(counts)).toBeLessThanOrEqual(6);
    // A replay of the same key answers from the stored answer and moves nothing.
    const replay = await counted(() => out(2_500n, "count-1"));
    expect(replay.value).toBe(id);
    expect(replay.counts.transactions).toBe(0);
  });

  it("answers a platform's own transfer-out (no customer gate) within its bound", async () => {
    const { accounts } = await h.ledger.listInternalAccounts({ platformId: w.platformId, owner: "PLATFORM", currency: "USD" });
    const ext = (await h.ledger.createExternalAccount({ platformId: w.platformId, owner: "PLATFORM", currency: "USD", accountInfo: usdInfo("998877665") })).account!.id;
    await h.ledger.fundInternalAccount({ platformId: w.platformId, accountId: accounts[0]!.id, amount: 10_000n });
    const transfer = { platformId: w.platformId, sourceAccountId: accounts[0]!.id, destinationAccountId: ext, amount: 700n, idempotencyKey: "count-platform" };
    const { value, counts } = await counted(() => h.ledger.transferOut({ transfer }));
    expect(value.result!.transaction!.status).toBe("PENDING");
    expect(counts.transactions).toBe(1);
    expect(counts.statements, JSON.stringify(counts)).toBeLessThanOrEqual(5);
  });

  it("settles a payout's COMPLETED and FAILED outcomes (inbox, lock, hold, entry, transaction, outbox) within their bound", async () => {
    const paid = await out(1_000n, "count-2");
    const completed = await counted(() => h.outcome(w.platformId, paid, "COMPLETED"));
    expect(completed.counts.transactions).toBe(1);
    expect(completed.counts.statements, JSON.stringify(completed.counts)).toBeLessThanOrEqual(5);

    const failing = await out(1_000n, "count-3");
    const failed = await counted(() => h.outcome(w.platformId, failing, "FAILED", "REJECTED_BY_BANK"));
    expect(failed.counts.transactions).toBe(1);
    expect(failed.counts.statements, JSON.stringify(failed.counts)).toBeLessThanOrEqual(5);

    const { accounts } = await h.ledger.listInternalAccounts({ platformId: w.platformId, owner: "CUSTOMER", customerId: w.customerId, currency: "USD" });
    const a = accounts.find((x) => x.id === w.account)!;
    // 1,000,000 funded; 100 (warm-up) and 1,000 left; 2,500 still held; 1,000 released.
    expect(a.balance).toBe(1_000_000n - 1_100n);
    expect(a.available).toBe(1_000_000n - 1_100n - 2_500n);
  });

  it("applies a fetched batch of outcomes together: PROCESSING and COMPLETED of 8 payouts, FAILED of 4, a duplicate (21 deliveries, 93 statements one by one), in one transaction of 5 statements", async () => {
    const { accounts: before } = await h.ledger.listInternalAccounts({ platformId: w.platformId, owner: "CUSTOMER", customerId: w.customerId, currency: "USD" });
    const start = before.find((x) => x.id === w.account)!;
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push(await out(BigInt(100 + i), `count-batch-${i}`));
    const outcome = (transactionId: string, status: string) =>
      create(RailOutcomeSchema, { eventId: newId("Event"), occurredAt: timestampFromDate(h.clock.now()), platformId: w.platformId, transactionId, status, reason: status === "FAILED" ? "REJECTED_BY_BANK" : "" });
    const batch = [
      ...ids.slice(0, 8).flatMap((id) => [outcome(id, "PROCESSING"), outcome(id, "COMPLETED")]),
      ...ids.slice(8).map((id) => outcome(id, "FAILED")),
    ];
    batch.push(batch[0]!);
    const { counts } = await counted(() => h.deliverMany("rail-outcomes", batch));
    expect(counts.transactions).toBe(1);
    expect(counts.statements, JSON.stringify(counts)).toBeLessThanOrEqual(5);

    // The same shape delivered one by one (as before the batch, and as the fallback does): a
    // transaction per delivery, PROCESSING 4 statements, COMPLETED and FAILED 5, the duplicate 1.
    const alone: string[] = [];
    for (let i = 0; i < 12; i++) alone.push(await out(BigInt(100 + i), `count-alone-${i}`));
    const oneByOne = [...alone.slice(0, 8).flatMap((id) => [outcome(id, "PROCESSING"), outcome(id, "COMPLETED")]), ...alone.slice(8).map((id) => outcome(id, "FAILED"))];
    oneByOne.push(oneByOne[0]!);
    const each = await counted(async () => {
      for (const m of oneByOne) await h.deliver("rail-outcomes", m);
    });
    expect(each.counts).toEqual({ statements: 8 * 4 + 8 * 5 + 4 * 5 + 1, transactions: 21 });

    for (const [i, id] of ids.entries()) {
      const tx = (await h.ledger.getTransaction({ platformId: w.platformId, transactionId: id })).transaction!;
      expect(tx.status, id).toBe(i < 8 ? "COMPLETED" : "FAILED");
    }
    const { accounts } = await h.ledger.listInternalAccounts({ platformId: w.platformId, owner: "CUSTOMER", customerId: w.customerId, currency: "USD" });
    const a = accounts.find((x) => x.id === w.account)!;
    const paid = ids.slice(0, 8).reduce((sum, _id, i) => sum + BigInt(100 + i), 0n);
    expect(a.balance).toBe(start.balance - 2n * paid);
    expect(a.available).toBe(start.available - 2n * paid);
    // Each payout's events once, in its order (PROCESSING before COMPLETED).
    const events = (await h.ledgerEvents()).filter((e) => e.payload.case === "transactionChanged" && ids.includes(e.payload.value.transaction!.id));
    for (const [i, id] of ids.entries()) {
      const types = events.filter((e) => e.payload.case === "transactionChanged" && e.payload.value.transaction!.id === id).map((e) => e.eventType);
      expect(types, id).toEqual(i < 8 ? ["OUTGOING_PAYMENT_PENDING", "OUTGOING_PAYMENT_PROCESSING", "OUTGOING_PAYMENT_COMPLETED"] : ["OUTGOING_PAYMENT_PENDING", "OUTGOING_PAYMENT_FAILED"]);
    }
    // 24 transfer-outs and 42 deliveries: on PGlite beside a loaded run, longer than the default.
  }, 120_000);
});
