import { errors, type Clock } from "@corridor/kit";
import { MAX_FUND_AMOUNT, checkAmount, internalAccount } from "./gates.js";
import type { Idempotent } from "./idempotency.js";
import { SYSTEM_TYPES, type AccountRow } from "./model.js";
import type { AnswerCodec, Directory, LedgerStore } from "./ports.js";

/** Sandbox funding: money from the platform's SANDBOX_FUNDING system account into an internal account. */
export function createSandboxFunding(deps: { store: LedgerStore; clock: Clock; directory: Directory; idempotent: Idempotent; answers: AnswerCodec<AccountRow> }) {
  const { store, clock, directory, idempotent } = deps;
  return {
    async fund(i: { platformId: string; accountId: string; amount: bigint; idempotencyKey: string }) {
      checkAmount(i.amount, MAX_FUND_AMOUNT);
      return idempotent({ platformId: i.platformId, key: i.idempotencyKey, request: { op: "fund", a: i.accountId, amt: i.amount }, codec: deps.answers }, async (complete) => {
        const account = await internalAccount(store, i.platformId, i.accountId);
        if ((await directory.environment(i.platformId)) !== "SANDBOX") throw errors.forbidden("Sandbox funding is for sandbox platforms only");
        return store.transaction(async (trx) => {
          const now = clock.now();
          // Money for a deleted (or closing) customer is refused, never parked in its account.
          if (account.customer_id) await trx.requireOpenCustomer(i.platformId, account.customer_id);
          const funding = await trx.systemAccountId(i.platformId, account.currency, SYSTEM_TYPES.sandboxFunding, now);
          const locked = await trx.lockAccounts(i.platformId, [account.id, funding]);
          await trx.postEntry(locked, { platformId: i.platformId, kind: "SANDBOX_FUNDING", now, postings: [{ accountId: funding, amount: -i.amount }, { accountId: account.id, amount: i.amount }] });
          const after = locked.get(account.id)!;
          await trx.emitBalanceUpdated(after, now);
          await complete(trx, after);
          return after;
        });
      });
    },
  };
}
