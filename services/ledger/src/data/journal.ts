import { sql, type Transaction } from "kysely";
import { newId } from "@corridor/kit";
import { applyEntry, checkHold, type Posting } from "../domain/journal.js";
import { stateOf, type AccountRow } from "./accounts.js";
import type { LedgerDatabase } from "./tables.js";

type Trx = Transaction<LedgerDatabase>;

// Each write below is one statement (data-modifying CTEs): a money movement pays one round trip
// per step, not one per row. The rules (balanced entries, no overdraft, holds within the available
// balance) are checked in the domain before, on the rows lockAccounts locked; the statements only
// write their outcome.

/**
 * Writes one journal entry, its postings and the new balances, in the caller's transaction.
 * `locked` must hold every account of the postings, locked through lockAccounts (and is updated in
 * place).
 */
export async function postEntry(
  trx: Trx,
  locked: Map<string, AccountRow>,
  e: { platformId: string; transactionId?: string; kind: string; postings: Posting[]; now: Date },
): Promise<string> {
  const states = new Map([...locked].map(([id, row]) => [id, stateOf(row)]));
  const balances = [...applyEntry(states, e.postings)];
  const entryId = newId("JournalEntry");
  await trx
    .with("entry", (db) =>
      db.insertInto("journal_entries").values({ id: entryId, platform_id: e.platformId, transaction_id: e.transactionId ?? null, kind: e.kind, created_at: e.now }),
    )
    .with("lines", (db) =>
      db.insertInto("postings").values(
        e.postings.map((p) => ({ entry_id: entryId, platform_id: e.platformId, account_id: p.accountId, currency: locked.get(p.accountId)!.currency, amount: p.amount })),
      ),
    )
    .updateTable("accounts")
    .set((eb) => {
      let balance = eb.case("id").when(balances[0]![0]).then(sql<bigint>`${balances[0]![1]}::bigint`);
      for (const [id, value] of balances.slice(1)) balance = balance.when(id).then(sql<bigint>`${value}::bigint`);
      return { balance: balance.else(eb.ref("balance")).end(), updated_at: e.now };
    })
    .where("platform_id", "=", e.platformId)
    .where("id", "in", balances.map(([id]) => id))
    .execute();
  for (const [id, balance] of balances) {
    const row = locked.get(id)!;
    locked.set(id, { ...row, balance, updated_at: e.now });
  }
  return entryId;
}

/** Reserves `amount` of the account's available money for a transaction in flight. */
export async function placeHold(trx: Trx, account: AccountRow, transactionId: string, amount: bigint, now: Date): Promise<AccountRow> {
  checkHold(stateOf(account), amount);
  const held = account.held + amount;
  await trx
    .with("hold", (db) =>
      db.insertInto("holds").values({ platform_id: account.platform_id, account_id: account.id, transaction_id: transactionId, amount, status: "ACTIVE", created_at: now, updated_at: now }),
    )
    .updateTable("accounts")
    .set({ held, updated_at: now })
    .where("platform_id", "=", account.platform_id)
    .where("id", "=", account.id)
    .execute();
  return { ...account, held, updated_at: now };
}

/**
 * Ends a transaction's active hold: CAPTURED when the money left (the caller posts the entry),
 * RELEASED when it goes back to the available balance. Answers the held amount, 0n when there was
 * no active hold (already settled). The hold's account must be in `locked` (updated in place).
 */
export async function settleHold(
  trx: Trx,
  platformId: string,
  locked: Map<string, AccountRow>,
  transactionId: string,
  status: "CAPTURED" | "RELEASED",
  now: Date,
): Promise<bigint> {
  const hold = await trx
    .with("hold", (db) =>
      db
        .updateTable("holds")
        .set({ status, updated_at: now })
        .where("platform_id", "=", platformId)
        .where("transaction_id", "=", transactionId)
        .where("status", "=", "ACTIVE")
        .returning(["account_id", "amount"]),
    )
    .with("account", (db) =>
      db
        .updateTable("accounts")
        .from("hold")
        .set((eb) => ({ held: eb("accounts.held", "-", eb.ref("hold.amount")), updated_at: now }))
        .whereRef("accounts.id", "=", "hold.account_id")
        .where("accounts.platform_id", "=", platformId),
    )
    .selectFrom("hold")
    .select(["account_id", "amount"])
    .executeTakeFirst();
  if (!hold) return 0n;
  const account = locked.get(hold.account_id);
  if (!account) throw new Error(`hold account ${hold.account_id} is not locked`);
  const amount = hold.amount;
  locked.set(account.id, { ...account, held: account.held - amount, updated_at: now });
  return amount;
}
