import type { ExpressionBuilder, Kysely, Transaction } from "kysely";
import type { After, BeneficialOwner, KycStatus, OwnerRole } from "../domain/types.js";
import type { BeneficialOwnerRow, CustomersKycDatabase } from "./tables.js";

type Db = Kysely<CustomersKycDatabase> | Transaction<CustomersKycDatabase>;

function toOwner(r: BeneficialOwnerRow): BeneficialOwner {
  return {
    id: r.id,
    platformId: r.platform_id,
    customerId: r.customer_id,
    roles: r.roles as OwnerRole[],
    ownershipPercentage: r.ownership_percentage,
    personalInfo: r.personal_info,
    kycStatus: r.kyc_status as KycStatus,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export async function insertOwner(db: Db, o: BeneficialOwner): Promise<void> {
  await db
    .insertInto("beneficial_owners")
    .values({
      id: o.id,
      platform_id: o.platformId,
      customer_id: o.customerId,
      roles: JSON.stringify(o.roles),
      ownership_percentage: o.ownershipPercentage,
      personal_info: JSON.stringify(o.personalInfo),
      kyc_status: o.kycStatus,
      created_at: o.createdAt,
      updated_at: o.updatedAt,
    })
    .execute();
}

export async function updateOwner(db: Db, o: BeneficialOwner): Promise<void> {
  await db
    .updateTable("beneficial_owners")
    .set({
      roles: JSON.stringify(o.roles),
      ownership_percentage: o.ownershipPercentage,
      personal_info: JSON.stringify(o.personalInfo),
      kyc_status: o.kycStatus,
      updated_at: o.updatedAt,
    })
    .where("platform_id", "=", o.platformId)
    .where("id", "=", o.id)
    .execute();
}

export async function getOwner(db: Db, platformId: string, id: string, opts: { forUpdate?: boolean } = {}): Promise<BeneficialOwner | undefined> {
  let q = db.selectFrom("beneficial_owners").selectAll().where("platform_id", "=", platformId).where("id", "=", id);
  if (opts.forUpdate) q = q.forUpdate();
  const row = await q.executeTakeFirst();
  return row && toOwner(row);
}

export async function allOwnersOf(db: Db, platformId: string, customerId: string): Promise<BeneficialOwner[]> {
  const rows = await db
    .selectFrom("beneficial_owners")
    .selectAll()
    .where("platform_id", "=", platformId)
    .where("customer_id", "=", customerId)
    .orderBy("created_at")
    .orderBy("id")
    .execute();
  return rows.map(toOwner);
}

export async function listOwners(db: Db, platformId: string, customerId: string, page: { limit: number; after?: After }): Promise<BeneficialOwner[]> {
  let q = db.selectFrom("beneficial_owners").selectAll().where("platform_id", "=", platformId).where("customer_id", "=", customerId);
  const after = page.after;
  if (after) {
    q = q.where((eb: ExpressionBuilder<CustomersKycDatabase, "beneficial_owners">) => eb(eb.refTuple("created_at", "id"), "<", eb.tuple(after.createdAt, after.id)));
  }
  const rows = await q.orderBy("created_at", "desc").orderBy("id", "desc").limit(page.limit).execute();
  return rows.map(toOwner);
}

export async function countOwners(db: Db, platformId: string, customerId: string): Promise<number> {
  const row = await db
    .selectFrom("beneficial_owners")
    .select((eb) => eb.fn.countAll<bigint | number | string>().as("n"))
    .where("platform_id", "=", platformId)
    .where("customer_id", "=", customerId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
