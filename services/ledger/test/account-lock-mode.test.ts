import { sql, type Kysely } from "@corridor/kit";
import type { Transaction } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lockAccounts } from "../src/data/accounts.js";
import { lockAccountsInOrder, lockTransactionsWithHolds } from "../src/data/rail-outcomes.js";
import { getTransaction } from "../src/data/transactions.js";
import type { LedgerDatabase } from "../src/data/tables.js";
import { quoteTransactionInput, quoteWorld, startLedgerHarness, type LedgerHarness } from "./harness.js";

/**
 * The ledger's money locks are FOR NO KEY UPDATE. PostgreSQL's foreign-key checks take FOR KEY
 * SHARE on the row a new posting, hold or transaction names (and again when a transaction updates a
 * transaction row it inserted itself); FOR UPDATE conflicts with that, FOR NO KEY UPDATE does not.
 * With FOR UPDATE, a sandbox funding (which inserts its transaction, then completes it) waited on an
 * account another transaction held while that one waited on an account the funding held: 40P01,
 * answered 500, seen with two ledger replicas under load. The locks still exclude each other (two
 * money transactions on one account take turns).
 */
describe("the ledger's row locks leave foreign-key checks free", () => {
  let h: LedgerHarness;
  let ledger: Kysely<LedgerDatabase>;
  beforeAll(async () => {
    h = await startLedgerHarness();
    ledger = h.db.forSchema<LedgerDatabase>("ledger");
  });
  afterAll(async () => h?.close());

  /** Every statement `run` sends through its transaction, as compiled. */
  async function statementsOf(run: (trx: Transaction<LedgerDatabase>) => Promise<unknown>): Promise<string[]> {
    const seen: string[] = [];
    await ledger.transaction().execute(async (trx) => {
      const logged = trx.withPlugin({
        transformQuery: (a) => {
          seen.push(trx.getExecutor().compileQuery(a.node, a.queryId).sql);
          return a.node;
        },
        transformResult: async (a) => a.result,
      });
      await run(logged);
    });
    return seen;
  }

  it("every money lock is FOR NO KEY UPDATE: accounts, a platform's source account, transactions with their holds, a transaction alone", async () => {
    const w = await quoteWorld(h, { fund: 10_000n });
    const tx = (await h.ledger.createQuoteTransaction(quoteTransactionInput(h, w))).transaction!;
    const locks = await statementsOf(async (trx) => {
      await lockAccounts(trx, w.platformId, [w.usd.id]);
      await lockAccountsInOrder(trx, [w.usd.id]);
      await lockTransactionsWithHolds(trx, [tx.id]);
      await getTransaction(trx, w.platformId, tx.id, true);
    });
    expect(locks).toHaveLength(4);
    for (const statement of locks) {
      expect(statement).toMatch(/ for no key update$/);
    }
  });

  it("on PostgreSQL, a foreign-key check naming a locked account does not wait for the lock; a second money lock does", async () => {
    if (h.db.kind !== "postgres") {
      // One session on PGlite: nothing runs beside a transaction, so there is no wait to observe;
      // the lock clause itself is asserted above.
      expect(h.db.kind).toBe("pglite");
      return;
    }
    const w = await quoteWorld(h, { fund: 10_000n });
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const lockTaken = new Promise<void>((r) => (locked = r));
    const holder = ledger.transaction().execute(async (trx) => {
      await lockAccounts(trx, w.platformId, [w.usd.id]);
      locked();
      await held;
    });
    await lockTaken;
    try {
      // What a foreign-key check does (RI_FKey_check): it must not wait.
      const keyShare = await ledger.transaction().execute(async (trx) => {
        await sql`set local lock_timeout = '2s'`.execute(trx);
        return sql`select 1 as one from ledger.accounts where id = ${w.usd.id} for key share`.execute(trx);
      });
      expect(keyShare.rows).toHaveLength(1);
      // Another money lock on the same account waits (and here gives up after its timeout).
      const second = ledger.transaction().execute(async (trx) => {
        await sql`set local lock_timeout = '300ms'`.execute(trx);
        await lockAccounts(trx, w.platformId, [w.usd.id]);
      });
      await expect(second).rejects.toMatchObject({ code: "55P03" });
    } finally {
      release();
      await holder;
    }
  });
});
