import { errors } from "@corridor/kit";
import type { LedgerStatements } from "./ports.js";

export interface CurrencyTrialBalance {
  currency: string;
  balanceSum: bigint;
  postingSum: bigint;
  accountCount: bigint;
  mismatchedAccountCount: bigint;
  groups: { ownerKind: string; accountType: string; balanceSum: bigint; accountCount: bigint }[];
}

/**
 * The operators' trial balance (LedgerAdminService): per currency, every account's balance and
 * postings summed, system accounts included. Read-only.
 */
export function createTrialBalance(store: LedgerStatements) {
  return async function trialBalance(platformId: string | undefined): Promise<CurrencyTrialBalance[]> {
    if (platformId) {
      // A mistyped id should not read as "balanced, nothing here".
      if (!(await store.platformKnown(platformId))) throw errors.notFound("Platform", platformId);
    }
    const byCurrency = new Map<string, CurrencyTrialBalance>();
    for (const r of await store.trialBalanceRows(platformId)) {
      let c = byCurrency.get(r.currency);
      if (!c) byCurrency.set(r.currency, (c = { currency: r.currency, balanceSum: 0n, postingSum: 0n, accountCount: 0n, mismatchedAccountCount: 0n, groups: [] }));
      c.balanceSum += r.balance;
      c.postingSum += r.posted;
      c.accountCount += r.accounts;
      c.mismatchedAccountCount += r.mismatched;
      c.groups.push({ ownerKind: r.ownerKind, accountType: r.type, balanceSum: r.balance, accountCount: r.accounts });
    }
    return [...byCurrency.values()];
  };
}
