import type { AccountCorrectionRow, AccountRow, ReceivedCreditRow } from "../domain/model.js";
import { platformEnvironmentCopy } from "./copies.js";
import type { Db } from "./tables.js";

// Rail notices (docs/connectors.md "Notices"): the received credits (deposits and the suspense
// list) and the account corrections, each once per (connector, bank entry id).

/** Inserts the credit unless the connector already reported that bank entry; undefined then. */
export async function insertReceivedCredit(db: Db, row: ReceivedCreditRow): Promise<ReceivedCreditRow | undefined> {
  return db
    .insertInto("received_credits")
    .values(row)
    .onConflict((oc) => oc.columns(["connector", "bank_entry_id"]).doNothing())
    .returningAll()
    .executeTakeFirst();
}

export async function getReceivedCredit(db: Db, id: string, forUpdate = false): Promise<ReceivedCreditRow | undefined> {
  let q = db.selectFrom("received_credits").selectAll().where("id", "=", id);
  if (forUpdate) q = q.forUpdate();
  return q.executeTakeFirst();
}

export async function receivedCreditByReturn(db: Db, returnTransactionId: string): Promise<ReceivedCreditRow | undefined> {
  return db.selectFrom("received_credits").selectAll().where("return_transaction_id", "=", returnTransactionId).forUpdate().executeTakeFirst();
}

export async function updateReceivedCredit(db: Db, id: string, set: Partial<Omit<ReceivedCreditRow, "id" | "connector" | "bank_entry_id">>): Promise<ReceivedCreditRow> {
  return db.updateTable("received_credits").set(set).where("id", "=", id).returningAll().executeTakeFirstOrThrow();
}

/** Newest first. */
export async function listReceivedCredits(db: Db, f: { status?: string; connector?: string; limit: number }): Promise<ReceivedCreditRow[]> {
  let q = db.selectFrom("received_credits").selectAll();
  if (f.status) q = q.where("status", "=", f.status as ReceivedCreditRow["status"]);
  if (f.connector) q = q.where("connector", "=", f.connector);
  return q.orderBy("received_at", "desc").orderBy("id", "desc").limit(f.limit).execute();
}

/** Notifications of change received, newest first (the operator's list; domain/deposits.ts). */
export async function listAccountCorrections(db: Db, f: { status?: string; connector?: string; limit: number }): Promise<AccountCorrectionRow[]> {
  let q = db.selectFrom("account_corrections").selectAll();
  if (f.status) q = q.where("status", "=", f.status as AccountCorrectionRow["status"]);
  if (f.connector) q = q.where("connector", "=", f.connector);
  const rows = await q.orderBy("received_at", "desc").orderBy("id", "desc").limit(f.limit).execute();
  return rows.map((r) => ({ ...r, corrected: (typeof r.corrected === "string" ? JSON.parse(r.corrected) : r.corrected) as Record<string, string> }));
}

/** The internal account whose funding reference this is (references are unique over the ledger). */
export async function accountByReference(db: Db, reference: string): Promise<AccountRow | undefined> {
  return db.selectFrom("accounts").selectAll().where("reference", "=", reference).where("owner_kind", "<>", "SYSTEM").executeTakeFirst();
}

/** An internal account by id, whatever its platform (the operator's suspense assignment). */
export async function accountById(db: Db, id: string): Promise<AccountRow | undefined> {
  return db.selectFrom("accounts").selectAll().where("id", "=", id).executeTakeFirst();
}

/** The platform's environment as its events said (the copy; no call to another service). */
export const platformEnvironment = platformEnvironmentCopy;

/** Records the correction unless the connector already reported that bank entry; false then. */
export async function insertAccountCorrection(db: Db, row: AccountCorrectionRow): Promise<boolean> {
  const r = await db
    .insertInto("account_corrections")
    .values({ ...row, corrected: JSON.stringify(row.corrected) })
    .onConflict((oc) => oc.columns(["connector", "bank_entry_id"]).doNothing())
    .returning("id")
    .executeTakeFirst();
  return !!r;
}

/** Replaces an external account's accountInfo (a receiving bank's correction). */
export async function updateExternalAccountInfo(db: Db, platformId: string, id: string, info: Record<string, unknown>, now: Date): Promise<void> {
  await db.updateTable("external_accounts").set({ account_info: JSON.stringify(info), updated_at: now }).where("platform_id", "=", platformId).where("id", "=", id).execute();
}

/** The fiat internal accounts of production platforms in these currencies (funding instructions refresh). */
export async function productionFiatAccounts(db: Db, currencies: string[]): Promise<AccountRow[]> {
  if (currencies.length === 0) return [];
  return db
    .selectFrom("accounts")
    .selectAll("accounts")
    .innerJoin("platforms", "platforms.id", "accounts.platform_id")
    .where("platforms.environment", "=", "PRODUCTION")
    .where("accounts.type", "=", "INTERNAL_FIAT")
    .where("accounts.owner_kind", "<>", "SYSTEM")
    .where("accounts.currency", "in", currencies)
    .execute();
}

export async function setFundingInstructions(db: Db, id: string, instructions: unknown[], now: Date): Promise<void> {
  await db.updateTable("accounts").set({ funding_instructions: JSON.stringify(instructions), updated_at: now }).where("id", "=", id).execute();
}
