import { sql, type Selectable } from "kysely";
import type { Db } from "./accounts.js";
import type { ExternalAccountsTable } from "./tables.js";

export type ExternalAccountRow = Selectable<ExternalAccountsTable>;

export type { ExternalAccountScope } from "../domain/model.js";
import type { ExternalAccountScope, NewExternalAccount } from "../domain/model.js";

export async function insertExternalAccount(db: Db, row: NewExternalAccount): Promise<void> {
  await db
    .insertInto("external_accounts")
    .values({
      ...row,
      account_info: JSON.stringify(row.account_info),
      beneficiary_verified_data: row.beneficiary_verified_data ? JSON.stringify(row.beneficiary_verified_data) : null,
    })
    .execute();
}

/**
 * Moves the default UMA deposit flag away from the customer's other accounts. Two requests setting
 * a default for one customer at once queue on a transaction-scoped advisory lock, so the second
 * clears the first's flag instead of hitting the one-default index.
 */
export async function clearDefaultDeposit(db: Db, platformId: string, customerId: string, now: Date): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`ledger.default-deposit:${platformId}:${customerId}`}, 0))`.execute(db);
  await db
    .updateTable("external_accounts")
    .set({ default_uma_deposit_account: false, updated_at: now })
    .where("platform_id", "=", platformId)
    .where("customer_id", "=", customerId)
    .where("default_uma_deposit_account", "=", true)
    .where("deleted_at", "is", null)
    .execute();
}

export async function getExternalAccount(db: Db, scope: ExternalAccountScope, id: string): Promise<ExternalAccountRow | undefined> {
  let q = db
    .selectFrom("external_accounts")
    .selectAll()
    .where("platform_id", "=", scope.platformId)
    .where("owner_kind", "=", scope.ownerKind)
    .where("id", "=", id)
    .where("deleted_at", "is", null);
  if (scope.customerId) q = q.where("customer_id", "=", scope.customerId);
  return q.executeTakeFirst();
}

/** Any live external account of the platform, whoever owns it (transfers decide ownership rules). */
export async function findExternalAccount(db: Db, platformId: string, id: string): Promise<ExternalAccountRow | undefined> {
  return db
    .selectFrom("external_accounts")
    .selectAll()
    .where("platform_id", "=", platformId)
    .where("id", "=", id)
    .where("deleted_at", "is", null)
    .executeTakeFirst();
}

export async function markExternalAccountDeleted(db: Db, platformId: string, id: string, now: Date): Promise<ExternalAccountRow> {
  return db
    .updateTable("external_accounts")
    .set({ deleted_at: now, updated_at: now, status: "INACTIVE", default_uma_deposit_account: false })
    .where("platform_id", "=", platformId)
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

function filtered(db: Db, f: ExternalAccountScope & { currency?: string }) {
  let q = db
    .selectFrom("external_accounts")
    .where("platform_id", "=", f.platformId)
    .where("owner_kind", "=", f.ownerKind)
    .where("deleted_at", "is", null);
  if (f.customerId) q = q.where("customer_id", "=", f.customerId);
  if (f.currency) q = q.where("currency", "=", f.currency);
  return q;
}

/** Newest first, keyset on (created_at, id). */
export async function listExternalAccounts(
  db: Db,
  f: ExternalAccountScope & { currency?: string },
  page: { limit: number; after?: { at: Date; id: string } },
) {
  let q = filtered(db, f).selectAll();
  if (page.after) {
    const at = page.after.at;
    const id = page.after.id;
    q = q.where((eb) => eb.or([eb("created_at", "<", at), eb.and([eb("created_at", "=", at), eb("id", "<", id)])]));
  }
  const rows = await q.orderBy("created_at", "desc").orderBy("id", "desc").limit(page.limit + 1).execute();
  const total = await filtered(db, f).select(sql<string>`count(*)`.as("n")).executeTakeFirstOrThrow();
  return { rows, total: Number(total.n) };
}

/** The customer's live default UMA deposit (external) account in this currency, if any. */
export async function defaultDepositAccount(db: Db, platformId: string, customerId: string, currency: string): Promise<ExternalAccountRow | undefined> {
  return db
    .selectFrom("external_accounts")
    .selectAll()
    .where("platform_id", "=", platformId)
    .where("customer_id", "=", customerId)
    .where("currency", "=", currency)
    .where("default_uma_deposit_account", "=", true)
    .where("deleted_at", "is", null)
    .executeTakeFirst();
}
