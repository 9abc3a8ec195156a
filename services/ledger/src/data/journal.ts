import type { Transaction } from "kysely";
import { newId } from "@corridor/kit";
import { applyEntry, checkHold, type Posting } from "../domain/journal.js";
import { setBalances, stateOf, type AccountRow } from "./accounts.js";
import type { LedgerDatabase } from "./tables.js";

type Trx = Transaction<LedgerDatabase>;

/**
 * Writes one journal entry and the new balances, in the caller's transaction. `locked` must hold
 * every account of the postings, locked through lockAccounts (and is updated in place).
 */
export async function postEntry(
  trx: Trx,
  locked: Map<string, AccountRow>,
  e: { platformId: string; transactionId?: string; kind: string; postings: Posting[]; now: Date },
): Promise<string> {
  const states = new Map([...locked].map(([id, row]) => [id, stateOf(row)]));
  const balances = applyEntry(states, e.postings);
  const entryId = newId("JournalEntry");
  await trx
    .insertInto("journal_entries")
    .values({ id: entryId, platform_id: e.platformId, transaction_id: e.transactionId ?? null, kind: e.kind, created_at: e.now })
    .execute();
  await trx
    .insertInto("postings")
    .values(
      e.postings.map((p) => ({
        entry_id: entryId,
        platform_id: e.platformId,
        account_id: p.accountId,
        currency: locked.get(p.accountId)!.currency,
        amount: p.amount,
      })),
    )
    .execute();
  for (const [id, balance] of balances) {
    await setBalances(trx, e.platformId, id, { balance }, e.now);
    const row = locked.get(id)!;
    locked.set(id, { ...row, balance, updated_at: e.now });
  }
  return entryId;
}

/** Reserves `amount` of the account's available money for a transaction in flight. */
export async function placeHold(trx: Trx, account: AccountRow, transactionId: string, amount: bigint, now: Date): Promise<AccountRow> {
  checkHold(stateOf(account), amount);
  await trx
    .insertInto("holds")
    .values({ platform_id: account.platform_id, account_id: account.id, transaction_id: transactionId, amount, status: "ACTIVE", created_at: now, updated_at: now })
    .execute();
  const held = account.held + amount;
  await setBalances(trx, account.platform_id, account.id, { held }, now);
  return { ...account, held, updated_at: now };
}

/**
 * Ends a transaction's active hold: CAPTURED when the money left (the caller posts the entry),
 * RELEASED when it goes back to the available balance. Answers the held amount, 0n when there was
 * no active hold (already settled).
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
    .updateTable("holds")
    .set({ status, updated_at: now })
    .where("platform_id", "=", platformId)
    .where("transaction_id", "=", transactionId)
    .where("status", "=", "ACTIVE")
    .returning(["account_id", "amount"])
    .executeTakeFirst();
  if (!hold) return 0n;
  const account = locked.get(hold.account_id);
  if (!account) throw new Error(`hold account ${hold.account_id} is not locked`);
  const held = account.held - hold.amount;
  await setBalances(trx, platformId, account.id, { held }, now);
  locked.set(account.id, { ...account, held, updated_at: now });
  return hold.amount;
}
