import { AppError } from "@corridor/kit";

/** One line of a journal entry: a signed amount on one account (credit > 0, debit < 0). */
export interface Posting {
  accountId: string;
  amount: bigint;
}

export interface AccountState {
  id: string;
  currency: string;
  /** System accounts (rail clearing, sandbox funding) may go negative; nobody else may. */
  system: boolean;
  balance: bigint;
  held: bigint;
}

export const available = (a: AccountState): bigint => a.balance - a.held;

export const insufficientBalance = (accountId: string, availableAmount: bigint, requested: bigint) =>
  new AppError("INVALID", "INSUFFICIENT_BALANCE", "The account's available balance is lower than the amount", {
    accountId,
    available: Number(availableAmount),
    requested: Number(requested),
  });

/**
 * The balances after an entry, or an error: the postings must sum to zero per currency (money is
 * neither created nor destroyed), and no non-system account may end below zero or below its holds.
 */
export function applyEntry(accounts: ReadonlyMap<string, AccountState>, postings: readonly Posting[]): Map<string, bigint> {
  if (postings.length < 2) throw new Error("a journal entry needs at least two postings");
  const sums = new Map<string, bigint>();
  const next = new Map<string, bigint>();
  for (const p of postings) {
    const a = accounts.get(p.accountId);
    if (!a) throw new Error(`posting on an account that is not locked: ${p.accountId}`);
    if (p.amount === 0n) throw new Error("a posting moves a non-zero amount");
    sums.set(a.currency, (sums.get(a.currency) ?? 0n) + p.amount);
    next.set(a.id, (next.get(a.id) ?? a.balance) + p.amount);
  }
  for (const [currency, sum] of sums) {
    if (sum !== 0n) throw new Error(`unbalanced journal entry: ${currency} postings sum to ${sum}`);
  }
  for (const [id, balance] of next) {
    const a = accounts.get(id)!;
    if (!a.system && balance - a.held < 0n) {
      const debit = a.balance - balance;
      throw insufficientBalance(id, available(a), debit);
    }
  }
  return next;
}

/** A hold reserves available money for a payment in flight. */
export function checkHold(a: AccountState, amount: bigint): void {
  if (amount <= 0n) throw new Error("a hold is positive");
  if (!a.system && available(a) < amount) throw insufficientBalance(a.id, available(a), amount);
}
