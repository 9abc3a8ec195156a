import type { MicroDepositRow, OwnershipChallengeRow } from "../domain/model.js";
import type { Db } from "./tables.js";

/** Ownership challenges and their micro-deposits (domain/ownership.ts). */

export async function insertOwnershipChallenge(db: Db, row: OwnershipChallengeRow): Promise<void> {
  await db.insertInto("ownership_challenges").values(row).execute();
}

/** The account's newest challenge; locked with `forUpdate` (inside a transaction). */
export async function latestOwnershipChallenge(db: Db, platformId: string, externalAccountId: string, forUpdate = false): Promise<OwnershipChallengeRow | undefined> {
  let q = db
    .selectFrom("ownership_challenges")
    .selectAll()
    .where("platform_id", "=", platformId)
    .where("external_account_id", "=", externalAccountId)
    .orderBy("created_at", "desc")
    .orderBy("id", "desc")
    .limit(1);
  if (forUpdate) q = q.forUpdate();
  return q.executeTakeFirst();
}

export async function getOwnershipChallenge(db: Db, id: string, forUpdate = false): Promise<OwnershipChallengeRow | undefined> {
  let q = db.selectFrom("ownership_challenges").selectAll().where("id", "=", id);
  if (forUpdate) q = q.forUpdate();
  return q.executeTakeFirst();
}

export async function updateOwnershipChallenge(db: Db, id: string, set: Partial<Omit<OwnershipChallengeRow, "id" | "created_at">>): Promise<OwnershipChallengeRow> {
  return db.updateTable("ownership_challenges").set(set).where("id", "=", id).returningAll().executeTakeFirstOrThrow();
}

export async function insertMicroDeposit(db: Db, row: MicroDepositRow): Promise<void> {
  await db.insertInto("micro_deposits").values(row).execute();
}

/** The micro-deposit a rail outcome names (locked: outcomes of one deposit apply one at a time). */
export async function microDepositByTransaction(db: Db, transactionId: string): Promise<MicroDepositRow | undefined> {
  return db.selectFrom("micro_deposits").selectAll().where("transaction_id", "=", transactionId).forUpdate().executeTakeFirst();
}

export async function microDepositsOf(db: Db, challengeId: string): Promise<MicroDepositRow[]> {
  return db.selectFrom("micro_deposits").selectAll().where("challenge_id", "=", challengeId).orderBy("transaction_id").execute();
}

export async function updateMicroDeposit(db: Db, transactionId: string, set: Partial<Pick<MicroDepositRow, "status" | "reason" | "updated_at">>): Promise<MicroDepositRow> {
  return db.updateTable("micro_deposits").set(set).where("transaction_id", "=", transactionId).returningAll().executeTakeFirstOrThrow();
}

/** The external account's status (ownership verification moves it; Grid's ExternalAccountStatus). */
export async function setExternalAccountStatus(db: Db, platformId: string, id: string, status: string, now: Date) {
  return db
    .updateTable("external_accounts")
    .set({ status, updated_at: now })
    .where("platform_id", "=", platformId)
    .where("id", "=", id)
    .where("deleted_at", "is", null)
    .returningAll()
    .executeTakeFirst();
}
