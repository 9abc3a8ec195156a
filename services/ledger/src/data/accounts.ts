import { randomUUID } from "node:crypto";
import { sql, type Kysely, type Selectable, type Transaction } from "kysely";
import { fixedShapeQuery, newId } from "@corridor/kit";
import { customerAccountStatus } from "../domain/account-status.js";
import type { AccountState } from "../domain/journal.js";
import type { AccountsTable, LedgerDatabase, OwnerKind } from "./tables.js";

export type { Db } from "./tables.js";
import type { Db } from "./tables.js";
export type AccountRow = Selectable<AccountsTable>;

export { SYSTEM_TYPES } from "../domain/model.js";
export type { InternalAccountFilter, OpenAccountInput } from "../domain/model.js";
import type { InternalAccountFilter, OpenAccountInput } from "../domain/model.js";

const ownerKey = (i: { ownerKind: OwnerKind; customerId?: string }) => (i.ownerKind === "CUSTOMER" ? i.customerId! : i.ownerKind);

/** Opens the account unless the owner already has one of that type and currency; true when created. */
export async function openAccount(db: Db, i: OpenAccountInput): Promise<boolean> {
  const res = await db
    .insertInto("accounts")
    .values({
      id: newId("InternalAccount"),
      platform_id: i.platformId,
      owner_kind: i.ownerKind,
      owner_key: ownerKey(i),
      customer_id: i.customerId ?? null,
      type: i.type,
      currency: i.currency,
      reference: i.reference,
      funding_instructions: JSON.stringify(i.fundingInstructions),
      created_at: i.now,
      updated_at: i.now,
    })
    .onConflict((oc) => oc.columns(["platform_id", "owner_key", "currency", "type"]).doNothing())
    .returning("id")
    .executeTakeFirst();
  if (res !== undefined && i.ownerKind === "CUSTOMER") await syncCustomerAccountStatus(db, i.platformId, i.customerId!);
  return res !== undefined;
}

/**
 * Sets the status of a customer's internal accounts from the ledger's copy of the customer
 * (domain/account-status.ts). Called whenever the copy changes, an account is opened for the
 * customer or the customer is closed, in the caller's transaction.
 */
export async function syncCustomerAccountStatus(db: Db, platformId: string, customerId: string): Promise<void> {
  const c = await db
    .selectFrom("customers")
    .select(["closed_at", "is_deleted", "verification_status"])
    .where("platform_id", "=", platformId)
    .where("id", "=", customerId)
    .executeTakeFirst();
  const status = customerAccountStatus(c && { closed: !!c.closed_at, isDeleted: c.is_deleted, verificationStatus: c.verification_status });
  await db
    .updateTable("accounts")
    .set({ status })
    .where("platform_id", "=", platformId)
    .where("owner_kind", "=", "CUSTOMER")
    .where("customer_id", "=", customerId)
    .where("status", "!=", status)
    .execute();
}

/** The system account of a kind for (platform, currency), opened on first use. */
export async function systemAccountId(db: Db, platformId: string, currency: string, type: string, now: Date): Promise<string> {
  const find = () =>
    db
      .selectFrom("accounts")
      .select("id")
      .where("platform_id", "=", platformId)
      .where("owner_key", "=", "SYSTEM")
      .where("currency", "=", currency)
      .where("type", "=", type)
      .executeTakeFirst();
  const existing = await find();
  if (existing) return existing.id;
  await openAccount(db, {
    platformId,
    ownerKind: "SYSTEM",
    type,
    currency,
    // Random like every reference: two transactions opening it at once then meet only on the
    // owner key (and one of them does nothing), never on the reference.
    reference: `SYS-${randomUUID()}`,
    fundingInstructions: [],
    now,
  });
  return (await find())!.id;
}

export async function getAccount(db: Db, platformId: string, id: string): Promise<AccountRow | undefined> {
  return db.selectFrom("accounts").selectAll().where("platform_id", "=", platformId).where("id", "=", id).executeTakeFirst();
}

/**
 * Locks the accounts (FOR NO KEY UPDATE) in id order, in one statement: the rows are locked as they
 * leave the sort, so every money transaction, locking all the accounts it touches through here
 * before changing any, takes its locks in the same order and two never wait on each other in
 * opposite orders. NO KEY UPDATE, not UPDATE: a balance change never touches the key, and FOR UPDATE
 * would also block the FOR KEY SHARE lock PostgreSQL's foreign-key checks take on an account when
 * another transaction inserts a posting, a hold or a transaction naming it (or updates a
 * transaction row it inserted) — a wait outside the id order, which deadlocked under load
 * (40P01, seen with two ledger replicas).
 */
export async function lockAccounts(trx: Transaction<LedgerDatabase>, platformId: string, ids: string[]): Promise<Map<string, AccountRow>> {
  const wanted = [...new Set(ids)].sort();
  const { rows } = await lockAccountsQuery.execute(trx, { platformId, ids: wanted }, wanted.length);
  const out = new Map(rows.map((r) => [r.id, r]));
  for (const id of wanted) if (!out.has(id)) throw new Error(`account ${id} vanished`);
  return new Map(wanted.map((id) => [id, out.get(id)!]));
}

/** lockAccounts' statement, compiled once per number of accounts (the kit's fixedShapeQuery). */
const lockAccountsQuery = fixedShapeQuery((db: Kysely<LedgerDatabase>, a: { platformId: string; ids: string[] }, n: number) =>
  db
    .selectFrom("accounts")
    .selectAll()
    .where("platform_id", "=", a.platformId)
    .where("id", "in", Array.from({ length: n }, (_, i) => a.ids[i]!))
    .orderBy("id")
    .forNoKeyUpdate(),
);

export const stateOf = (r: AccountRow): AccountState => ({
  id: r.id,
  currency: r.currency,
  system: r.owner_kind === "SYSTEM",
  balance: r.balance,
  held: r.held,
});

export async function setBalances(trx: Transaction<LedgerDatabase>, platformId: string, id: string, v: { balance?: bigint; held?: bigint }, now: Date) {
  await trx
    .updateTable("accounts")
    .set({ ...(v.balance !== undefined ? { balance: v.balance } : {}), ...(v.held !== undefined ? { held: v.held } : {}), updated_at: now })
    .where("platform_id", "=", platformId)
    .where("id", "=", id)
    .execute();
}

function filtered(db: Db, f: InternalAccountFilter) {
  let q = db.selectFrom("accounts").where("platform_id", "=", f.platformId).where("owner_kind", "=", f.ownerKind);
  if (f.customerId) q = q.where("customer_id", "=", f.customerId);
  if (f.currency) q = q.where("currency", "=", f.currency);
  if (f.type) q = q.where("type", "=", f.type);
  return q;
}

/** Oldest first, keyset on (created_at, id). */
export async function listAccounts(db: Db, f: InternalAccountFilter, page: { limit: number; after?: { at: Date; id: string } }) {
  let q = filtered(db, f).selectAll();
  if (page.after) {
    const at = page.after.at;
    const id = page.after.id;
    q = q.where((eb) => eb.or([eb("created_at", ">", at), eb.and([eb("created_at", "=", at), eb("id", ">", id)])]));
  }
  const rows = await q.orderBy("created_at", "asc").orderBy("id", "asc").limit(page.limit + 1).execute();
  const total = await filtered(db, f).select(sql<string>`count(*)`.as("n")).executeTakeFirstOrThrow();
  return { rows, total: Number(total.n) };
}

/** The customer's first internal account of a type and currency (an incoming payment's deposit account). */
export async function customerAccountOf(db: Db, platformId: string, customerId: string, currency: string, type: string): Promise<AccountRow | undefined> {
  return db
    .selectFrom("accounts")
    .selectAll()
    .where("platform_id", "=", platformId)
    .where("owner_kind", "=", "CUSTOMER")
    .where("customer_id", "=", customerId)
    .where("currency", "=", currency)
    .where("type", "=", type)
    .orderBy("created_at", "asc")
    .executeTakeFirst();
}

/** Wallet privacy of an embedded wallet (PATCH /internal-accounts/{id}). */
export async function setPrivateEnabled(db: Db, platformId: string, id: string, value: boolean, now: Date): Promise<AccountRow> {
  return db.updateTable("accounts").set({ private_enabled: value, updated_at: now }).where("platform_id", "=", platformId).where("id", "=", id).returningAll().executeTakeFirstOrThrow();
}
