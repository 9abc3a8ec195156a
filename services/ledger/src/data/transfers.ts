import { sql, type ExpressionBuilder, type Insertable } from "kysely";
import { checkHold } from "../domain/journal.js";
import { stateOf, type AccountRow } from "./accounts.js";
import { copyOfCustomer, type CustomerCopy } from "./copies.js";
import type { ExternalAccountRow } from "./external-accounts.js";
import type { Db, ExternalAccountsTable, LedgerDatabase, TransactionsTable, Trx } from "./tables.js";
import type { TransactionRow } from "./transactions.js";

/** Whether the external account is still live (not deleted), as a column `external_live` of the enclosing select. */
function externalLive(eb: ExpressionBuilder<LedgerDatabase, keyof LedgerDatabase>, platformId: string, externalId: string) {
  return eb
    .exists(
      eb
        .selectFrom("external_accounts")
        .select(sql<number>`1`.as("one"))
        .where("external_accounts.platform_id", "=", platformId)
        .where("external_accounts.id", "=", externalId)
        .where("external_accounts.deleted_at", "is", null),
    )
    .as("external_live");
}

/**
 * The customer gate of a transfer and the recheck of its external account, in one statement: the
 * customer's copy share-locked as requireOpenCustomer locks it (before any account lock), and
 * whether the external account is still live. Undefined when the ledger has no copy of the
 * customer (nothing to guard: the caller rechecks the external account alone).
 */
export async function customerGate(trx: Trx, platformId: string, customerId: string, externalId: string): Promise<{ open: boolean; externalLive: boolean } | undefined> {
  const row = await trx
    .selectFrom("customers")
    .select((eb) => [
      "closed_at",
      "is_deleted",
      externalLive(eb, platformId, externalId),
    ])
    .where("customers.platform_id", "=", platformId)
    .where("customers.id", "=", customerId)
    .forShare()
    .executeTakeFirst();
  if (!row) return undefined;
  return { open: !row.closed_at && !row.is_deleted, externalLive: !!row.external_live };
}

/**
 * A platform's transfer-out: its source account locked (FOR NO KEY UPDATE, as lockAccounts locks one) and
 * whether its external account is still live, in one statement. Throws when the account vanished.
 */
export async function lockSourceCheckingExternal(trx: Trx, platformId: string, accountId: string, externalId: string): Promise<{ account: AccountRow; externalLive: boolean }> {
  const row = await trx
    .selectFrom("accounts")
    .selectAll("accounts")
    .select((eb) => externalLive(eb, platformId, externalId))
    .where("accounts.platform_id", "=", platformId)
    .where("accounts.id", "=", accountId)
    .forNoKeyUpdate()
    .executeTakeFirst();
  if (!row) throw new Error(`account ${accountId} vanished`);
  const { external_live, ...account } = row;
  return { account, externalLive: !!external_live };
}

/**
 * A transfer-out's transaction row and the hold on its source account, in one statement (the hold
 * row, the account's `held`, the transaction row: data-modifying CTEs). `account` must be locked
 * (lockAccounts); the hold is checked against it first (INSUFFICIENT_BALANCE), as placeHold does.
 */
export async function insertTransactionWithHold(
  trx: Trx,
  row: Insertable<TransactionsTable>,
  account: AccountRow,
  amount: bigint,
  now: Date,
): Promise<{ tx: TransactionRow; account: AccountRow }> {
  checkHold(stateOf(account), amount);
  const held = account.held + amount;
  const tx = await trx
    .with("hold", (db) =>
      db.insertInto("holds").values({ platform_id: account.platform_id, account_id: account.id, transaction_id: row.id, amount, status: "ACTIVE", created_at: now, updated_at: now }),
    )
    .with("held", (db) => db.updateTable("accounts").set({ held, updated_at: now }).where("platform_id", "=", account.platform_id).where("id", "=", account.id))
    .insertInto("transactions")
    .values(row)
    .returningAll()
    .executeTakeFirstOrThrow();
  return { tx, account: { ...account, held, updated_at: now } };
}

/** Every column of external_accounts (the compiler checks none is missing). */
const EXTERNAL_COLUMNS = [
  "id",
  "platform_id",
  "owner_kind",
  "customer_id",
  "currency",
  "account_type",
  "account_info",
  "platform_account_id",
  "default_uma_deposit_account",
  "status",
  "beneficiary_verification_status",
  "beneficiary_verified_data",
  "created_at",
  "updated_at",
  "deleted_at",
] as const satisfies readonly (keyof ExternalAccountsTable)[];
const allExternalColumns: Exclude<keyof ExternalAccountsTable, (typeof EXTERNAL_COLUMNS)[number]> extends never ? true : false = true;
void allExternalColumns;

/**
 * What a transfer's checks read, in one statement: the internal account, the live external
 * account (undefined when absent or deleted) and the ledger's copy of the internal account's
 * customer (as customerCopy reads it). Nothing at all when the internal account does not exist
 * (its 404 comes first).
 */
export async function transferParties(
  db: Db,
  platformId: string,
  internalId: string,
  externalId: string,
): Promise<{ internal?: AccountRow; external?: ExternalAccountRow; customerCopy?: CustomerCopy }> {
  const row = (await db
    .selectFrom("accounts as a")
    .leftJoin("external_accounts as e", (join) => join.on("e.platform_id", "=", platformId).on("e.id", "=", externalId).on("e.deleted_at", "is", null))
    .leftJoin("customers as c", (join) => join.onRef("c.platform_id", "=", "a.platform_id").onRef("c.id", "=", "a.customer_id"))
    .selectAll("a")
    .select(EXTERNAL_COLUMNS.map((c) => sql.ref(`e.${c}`).as(`e__${c}`)))
    .select(["c.platform_customer_id as c__platform_customer_id", "c.verification_status as c__verification_status", "c.is_deleted as c__is_deleted"])
    .where("a.platform_id", "=", platformId)
    .where("a.id", "=", internalId)
    .executeTakeFirst()) as (AccountRow & Record<string, unknown>) | undefined;
  if (!row) return {};
  const internal: Record<string, unknown> = {};
  const external: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(row)) {
    if (k.startsWith("e__")) external[k.slice(3)] = v;
    else if (!k.startsWith("c__")) internal[k] = v;
  }
  return {
    internal: internal as AccountRow,
    external: row.e__id === null || row.e__id === undefined ? undefined : (external as ExternalAccountRow),
    customerCopy:
      row.c__is_deleted === null || row.c__is_deleted === undefined
        ? undefined
        : copyOfCustomer({ platform_customer_id: row.c__platform_customer_id as string, verification_status: row.c__verification_status as string | null, is_deleted: row.c__is_deleted as boolean }),
  };
}
