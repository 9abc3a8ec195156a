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
});
