import { sql, type ExpressionBuilder, type Insertable, type Updateable } from "kysely";
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
 * A platform's transfer-out: its source account locked (FOR UPDATE, as lockAccounts locks one) and
 * whether its external account is still live, in one statement. Throws when the account vanished.
 */
export async function lockSourceCheckingExternal(trx: Trx, platformId: string, accountId: string, externalId: string): Promise<{ account: AccountRow; externalLive: boolean }> {
  const row = await trx
    .selectFrom("accounts")
    .selectAll("accounts")
    .select((eb) => externalLive(eb, platformId, externalId))
    .where("accounts.platform_id", "=", platformId)
    .where("accounts.id", "=", accountId)
    .forUpdate()
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

/**
 * A transfer-out's outcome in one statement: its active hold ends (CAPTURED: the money leaves the
 * internal account for rail clearing as one journal entry; RELEASED: it goes back to the available
 * balance), the accounts' balances and `held` follow, and the transaction row takes `set`. With no
 * active hold (already settled) only the transaction row changes. The accounts must be in `locked`
 * (lockAccounts; updated in place). Answers the updated row and the amount the hold had (0n: none).
 */
export async function settleTransferOut(
  trx: Trx,
  locked: Map<string, AccountRow>,
  s: {
    platformId: string;
    transactionId: string;
    status: "CAPTURED" | "RELEASED";
    /** CAPTURED: the journal entry (its id and kind) and the account the money goes to. */
    entry?: { id: string; kind: string; clearingId: string };
    set: Updateable<TransactionsTable>;
    now: Date;
  },
): Promise<{ tx: TransactionRow; amount: bigint }> {
  const { platformId, now, entry } = s;
  const hold = trx.with("hold", (db) =>
    db
      .updateTable("holds")
      .set({ status: s.status, updated_at: now })
      .where("platform_id", "=", platformId)
      .where("transaction_id", "=", s.transactionId)
      .where("status", "=", "ACTIVE")
      .returning(["account_id", "amount"]),
  );
  let q;
  if (entry) {
    // CAPTURED: the hold's account pays the hold's amount to clearing (one entry, two postings),
    // its balance and held both go down by it; nothing when there was no active hold.
    const currency = locked.get(entry.clearingId)!.currency;
    q = hold
      .with("entry", (db) =>
        db
          .insertInto("journal_entries")
          .columns(["id", "platform_id", "transaction_id", "kind", "created_at"])
          .expression((eb) => eb.selectFrom("hold").select([sql.val(entry.id).as("id"), sql.val(platformId).as("platform_id"), sql.val(s.transactionId).as("transaction_id"), sql.val(entry.kind).as("kind"), sql.val(now).as("created_at")])),
      )
      .with("debit", (db) =>
        db
          .insertInto("postings")
          .columns(["entry_id", "platform_id", "account_id", "currency", "amount"])
          .expression((eb) =>
            eb.selectFrom("hold").select([sql.val(entry.id).as("entry_id"), sql.val(platformId).as("platform_id"), "hold.account_id", sql.val(currency).as("currency"), sql<bigint>`-hold.amount`.as("amount")]),
          ),
      )
      .with("credit", (db) =>
        db
          .insertInto("postings")
          .columns(["entry_id", "platform_id", "account_id", "currency", "amount"])
          .expression((eb) =>
            eb.selectFrom("hold").select([sql.val(entry.id).as("entry_id"), sql.val(platformId).as("platform_id"), sql.val(entry.clearingId).as("account_id"), sql.val(currency).as("currency"), "hold.amount"]),
          ),
      )
      .with("balances", (db) =>
        db
          .updateTable("accounts")
          .from("hold")
          .set((eb) => ({
            balance: sql<bigint>`case when accounts.id = hold.account_id then accounts.balance - hold.amount else accounts.balance + hold.amount end`,
            held: sql<bigint>`case when accounts.id = hold.account_id then accounts.held - hold.amount else accounts.held end`,
            updated_at: now,
          }))
          .where("accounts.platform_id", "=", platformId)
          .where((eb) => eb.or([eb("accounts.id", "=", eb.ref("hold.account_id")), eb("accounts.id", "=", entry.clearingId)])),
      );
  } else {
    q = hold.with("balances", (db) =>
      db
        .updateTable("accounts")
        .from("hold")
        .set((eb) => ({ held: eb("accounts.held", "-", eb.ref("hold.amount")), updated_at: now }))
        .whereRef("accounts.id", "=", "hold.account_id")
        .where("accounts.platform_id", "=", platformId),
    );
  }
  const row = (await (q as unknown as typeof hold)
    .updateTable("transactions")
    .set(s.set)
    .where("platform_id", "=", platformId)
    .where("id", "=", s.transactionId)
    .returningAll()
    .returning([sql<bigint | null>`(select amount from hold)`.as("settled_amount"), sql<string | null>`(select account_id from hold)`.as("settled_account")])
    .executeTakeFirstOrThrow()) as TransactionRow & { settled_amount: bigint | string | null; settled_account: string | null };
  const { settled_amount, settled_account, ...tx } = row;
  if (settled_amount === null || settled_account === null) return { tx: tx as TransactionRow, amount: 0n };
  const amount = BigInt(settled_amount);
  const account = locked.get(settled_account);
  if (!account) throw new Error(`hold account ${settled_account} is not locked`);
  locked.set(account.id, { ...account, balance: entry ? account.balance - amount : account.balance, held: account.held - amount, updated_at: now });
  if (entry) {
    const clearing = locked.get(entry.clearingId)!;
    locked.set(clearing.id, { ...clearing, balance: clearing.balance + amount, updated_at: now });
  }
  return { tx: tx as TransactionRow, amount };
}
