import type { ExpressionBuilder, Kysely, SelectQueryBuilder, Transaction } from "kysely";
import type { After, Verification, VerificationFilter, VerificationStatus } from "../domain/types.js";
import type { CustomersKycDatabase, VerificationRow } from "./tables.js";

type Db = Kysely<CustomersKycDatabase> | Transaction<CustomersKycDatabase>;

function toVerification(r: VerificationRow): Verification {
  return {
    id: r.id,
    platformId: r.platform_id,
    customerId: r.customer_id,
    verificationStatus: r.verification_status as VerificationStatus,
    errors: r.errors,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export async function insertVerification(db: Db, v: Verification): Promise<void> {
  await db
    .insertInto("verifications")
    .values({
      id: v.id,
      platform_id: v.platformId,
      customer_id: v.customerId,
      verification_status: v.verificationStatus,
      errors: JSON.stringify(v.errors),
      created_at: v.createdAt,
      updated_at: v.updatedAt,
    })
    .execute();
}

export async function updateVerification(db: Db, v: Verification): Promise<void> {
  await db
    .updateTable("verifications")
    .set({ verification_status: v.verificationStatus, errors: JSON.stringify(v.errors), updated_at: v.updatedAt })
    .where("platform_id", "=", v.platformId)
    .where("id", "=", v.id)
    .execute();
}

export async function getVerification(db: Db, platformId: string, id: string): Promise<Verification | undefined> {
  const row = await db.selectFrom("verifications").selectAll().where("platform_id", "=", platformId).where("id", "=", id).executeTakeFirst();
  return row && toVerification(row);
}

function filtered<O>(q: SelectQueryBuilder<CustomersKycDatabase, "verifications", O>, f: VerificationFilter) {
  let out = q.where("platform_id", "=", f.platformId);
  if (f.customerId !== undefined) out = out.where("customer_id", "=", f.customerId);
  if (f.verificationStatus !== undefined) out = out.where("verification_status", "=", f.verificationStatus);
  return out;
}

export async function listVerifications(db: Db, f: VerificationFilter, page: { limit: number; after?: After }): Promise<Verification[]> {
  let q = filtered(db.selectFrom("verifications").selectAll(), f);
  const after = page.after;
  if (after) {
    q = q.where((eb: ExpressionBuilder<CustomersKycDatabase, "verifications">) => eb(eb.refTuple("created_at", "id"), "<", eb.tuple(after.createdAt, after.id)));
  }
  const rows = await q.orderBy("created_at", "desc").orderBy("id", "desc").limit(page.limit).execute();
  return rows.map(toVerification);
}

export async function countVerifications(db: Db, f: VerificationFilter): Promise<number> {
  const row = await filtered(db.selectFrom("verifications").select((eb) => eb.fn.countAll<bigint | number | string>().as("n")), f).executeTakeFirstOrThrow();
  return Number(row.n);
}
