import { errors, type Clock } from "@corridor/kit";
import type { Kysely } from "kysely";
import { SYSTEM_TYPES, lockAccounts, systemAccountId, type AccountRow } from "../data/accounts.js";
import { requireOpenCustomer } from "../data/customers.js";
import { postEntry } from "../data/journal.js";
import type { LedgerDatabase } from "../data/tables.js";
import { emitBalanceUpdated } from "../events/ledger-events.js";
import { MAX_FUND_AMOUNT, checkAmount, internalAccount } from "./gates.js";
import type { Idempotent } from "./idempotency.js";
import type { AnswerCodec, Directory } from "./ports.js";

/** Sandbox funding: money from the platform's SANDBOX_FUNDING system account into an internal account. */
export function createSandboxFunding(deps: { db: Kysely<LedgerDatabase>; clock: Clock; directory: Directory; idempotent: Idempotent; answers: AnswerCodec<AccountRow> }) {
  const { db, clock, directory, idempotent } = deps;
  return {
    async fund(i: { platformId: string; accountId: string; amount: bigint; idempotencyKey: string }) {
      checkAmount(i.amount, MAX_FUND_AMOUNT);
      return idempotent({ platformId: i.platformId, key: i.idempotencyKey, request: { op: "fund", a: i.accountId, amt: i.amount }, codec: deps.answers }, async (complete) => {
        const account = await internalAccount(db, i.platformId, i.accountId);
        if ((await directory.environment(i.platformId)) !== "SANDBOX") throw errors.forbidden("Sandbox funding is for sandbox platforms only");
        return db.transaction().execute(async (trx) => {
          const now = clock.now();
          // Money for a deleted (or closing) customer is refused, never parked in its account.
          if (account.customer_id) await requireOpenCustomer(trx, i.platformId, account.customer_id);
          const funding = await systemAccountId(trx, i.platformId, account.currency, SYSTEM_TYPES.sandboxFunding, now);
          const locked = await lockAccounts(trx, i.platformId, [account.id, funding]);
          await postEntry(trx, locked, { platformId: i.platformId, kind: "SANDBOX_FUNDING", now, postings: [{ accountId: funding, amount: -i.amount }, { accountId: account.id, amount: i.amount }] });
          const after = locked.get(account.id)!;
          await emitBalanceUpdated(trx, after, now);
          await complete(trx, after);
          return after;
        });
      });
    },
  };
}
