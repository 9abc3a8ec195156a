import { fixedShapeQuery } from "@corridor/kit";
import { sql, type ExpressionBuilder, type Insertable, type Kysely } from "kysely";
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
  const row = (await customerGateQuery.execute(trx, { platformId, customerId, externalId })).rows[0];
  if (!row) return undefined;
  return { open: !row.closed_at && !row.is_deleted, externalLive: !!row.external_live };
}

// The statements of every transfer: built and compiled once per database handle (the kit's
// fixedShapeQuery), each run with its values.
const customerGateQuery = fixedShapeQuery((db: Kysely<LedgerDatabase>, a: { platformId: string; customerId: string; externalId: string }) =>
  db
    .selectFrom("customers")
    .select((eb) => ["closed_at", "is_deleted", externalLive(eb, a.platformId, a.externalId)])
    .where("customers.platform_id", "=", a.platformId)
    .where("customers.id", "=", a.customerId)
    .forShare(),
);

/**
 * A platform's transfer-out: its source account locked (FOR NO KEY UPDATE, as lockAccounts locks one) and
 * whether its external account is still live, in one statement. Throws when the account vanished.
 */
export async function lockSourceCheckingExternal(trx: Trx, platformId: string, accountId: string, externalId: string): Promise<{ account: AccountRow; externalLive: boolean }> {
  const row = (await lockSourceQuery.execute(trx, { platformId, accountId, externalId })).rows[0];
  if (!row) throw new Error(`account ${accountId} vanished`);
  const { external_live, ...account } = row;
  return { account, externalLive: !!external_live };
}

const lockSourceQuery = fixedShapeQuery((db: Kysely<LedgerDatabase>, a: { platformId: string; accountId: string; externalId: string }) =>
  db
    .selectFrom("accounts")
    .selectAll("accounts")
    .select((eb) => externalLive(eb, a.platformId, a.externalId))
    .where("accounts.platform_id", "=", a.platformId)
    .where("accounts.id", "=", a.accountId)
    .forNoKeyUpdate(),
);

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
  // The row's columns that have a value are its shape (Kysely leaves out an undefined one).
  const columns = (Object.keys(row) as (keyof typeof row)[]).filter((c) => row[c] !== undefined).sort();
  const tx = (await insertWithHoldQuery.execute(trx, { row, platformId: account.platform_id, accountId: account.id, amount, held, now }, columns.join(","))).rows[0];
  if (!tx) throw new Error(`transaction ${row.id} was not inserted`);
  return { tx, account: { ...account, held, updated_at: now } };
}

const insertWithHoldQuery = fixedShapeQuery(
  (db: Kysely<LedgerDatabase>, a: { row: Insertable<TransactionsTable>; platformId: string; accountId: string; amount: bigint; held: bigint; now: Date }, columns: string) =>
    db
      .with("hold", (q) => q.insertInto("holds").values({ platform_id: a.platformId, account_id: a.accountId, transaction_id: a.row.id, amount: a.amount, status: "ACTIVE", created_at: a.now, updated_at: a.now }))
      .with("held", (q) => q.updateTable("accounts").set({ held: a.held, updated_at: a.now }).where("platform_id", "=", a.platformId).where("id", "=", a.accountId))
      .insertInto("transactions")
      .values(Object.fromEntries(columns.split(",").map((c) => [c, a.row[c as keyof typeof a.row]])) as Insertable<TransactionsTable>)
      .returningAll(),
);

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
  const row = (await transferPartiesQuery.execute(db, { platformId, internalId, externalId })).rows[0] as (AccountRow & Record<string, unknown>) | undefined;
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

const transferPartiesQuery = fixedShapeQuery((db: Kysely<LedgerDatabase>, a: { platformId: string; internalId: string; externalId: string }) =>
  db
    .selectFrom("accounts as a")
    .leftJoin("external_accounts as e", (join) => join.on("e.platform_id", "=", a.platformId).on("e.id", "=", a.externalId).on("e.deleted_at", "is", null))
    .leftJoin("customers as c", (join) => join.onRef("c.platform_id", "=", "a.platform_id").onRef("c.id", "=", "a.customer_id"))
    .selectAll("a")
    .select(EXTERNAL_COLUMNS.map((c) => sql.ref(`e.${c}`).as(`e__${c}`)))
    .select(["c.platform_customer_id as c__platform_customer_id", "c.verification_status as c__verification_status", "c.is_deleted as c__is_deleted"])
    .where("a.platform_id", "=", a.platformId)
    .where("a.id", "=", a.internalId),
);
