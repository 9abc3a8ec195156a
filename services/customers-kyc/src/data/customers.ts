import { sql, type ExpressionBuilder, type Kysely, type SelectQueryBuilder, type Transaction } from "kysely";
import { Conflict } from "../domain/ports.js";
import type { After, Customer, CustomerFilter, KycStatus } from "../domain/types.js";
import type { CustomerRow, CustomersKycDatabase } from "./tables.js";

type Db = Kysely<CustomersKycDatabase> | Transaction<CustomersKycDatabase>;

function toCustomer(r: CustomerRow): Customer {
  return {
    id: r.id,
    platformId: r.platform_id,
    platformCustomerId: r.platform_customer_id,
    customerType: r.customer_type,
    umaAddress: r.uma_address,
    region: r.region,
    currencies: r.currencies,
    email: r.email,
    verificationStatus: r.verification_status as KycStatus,
    fullName: r.full_name,
    birthDate: r.birth_date,
    nationality: r.nationality,
    address: r.address,
    businessInfo: r.business_info,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    deletedAt: r.deleted_at,
    verifiedEmail: r.verified_email ?? null,
  };
}

function toRow(c: Customer) {
  return {
    id: c.id,
    platform_id: c.platformId,
    platform_customer_id: c.platformCustomerId,
    customer_type: c.customerType,
    uma_address: c.umaAddress,
    region: c.region,
    currencies: JSON.stringify(c.currencies),
    email: c.email,
    verification_status: c.verificationStatus,
    full_name: c.fullName,
    birth_date: c.birthDate,
    nationality: c.nationality,
    address: c.address ? JSON.stringify(c.address) : null,
    business_info: c.businessInfo ? JSON.stringify(c.businessInfo) : null,
    created_at: c.createdAt,
    updated_at: c.updatedAt,
    deleted_at: c.deletedAt,
  };
}

/** Unique violations name the index; each maps to the field the caller chose. */
function asConflict(err: unknown): Conflict | undefined {
  const e = err as { code?: unknown; constraint?: unknown; message?: unknown };
  if (typeof e !== "object" || e === null || e.code !== "23505") return undefined;
  const text = `${String(e.constraint ?? "")} ${String(e.message ?? "")}`;
  return new Conflict(text.includes("uma_address") ? "umaAddress" : "platformCustomerId");
}

export async function insertCustomer(db: Db, c: Customer): Promise<void> {
  try {
    await db.insertInto("customers").values(toRow(c)).execute();
  } catch (err) {
    throw asConflict(err) ?? err;
  }
}

export async function updateCustomer(db: Db, c: Customer): Promise<void> {
  const { id, platform_id, created_at, ...rest } = toRow(c);
  try {
    await db.updateTable("customers").set(rest).where("platform_id", "=", platform_id).where("id", "=", id).execute();
  } catch (err) {
    throw asConflict(err) ?? err;
  }
}

export async function getCustomer(db: Db, platformId: string, id: string, opts: { forUpdate?: boolean } = {}): Promise<Customer | undefined> {
  let q = db.selectFrom("customers").selectAll().where("platform_id", "=", platformId).where("id", "=", id);
  if (opts.forUpdate) q = q.forUpdate();
  const row = await q.executeTakeFirst();
  return row && toCustomer(row);
}

export async function findLiveCustomerByUma(db: Db, platformId: string, uma: string): Promise<Customer | undefined> {
  const row = await db
    .selectFrom("customers")
    .selectAll()
    .where("platform_id", "=", platformId)
    .where("uma_address", "=", uma)
    .where("deleted_at", "is", null)
    .executeTakeFirst();
  return row && toCustomer(row);
}

/** Up to `limit` live customers of the platform without a UMA address, oldest first, locked until the transaction ends. */
export async function liveCustomersWithoutUma(db: Db, platformId: string, limit: number): Promise<Customer[]> {
  const rows = await db
    .selectFrom("customers")
    .selectAll()
    .where("platform_id", "=", platformId)
    .where("uma_address", "=", "")
    .where("deleted_at", "is", null)
    .orderBy("created_at")
    .orderBy("id")
    .limit(limit)
    .forUpdate()
    .execute();
  return rows.map(toCustomer);
}

/** The filters shared by the page query and its count, so totalCount matches what paging walks. */
function filtered<O>(q: SelectQueryBuilder<CustomersKycDatabase, "customers", O>, f: CustomerFilter) {
  let out = q.where("platform_id", "=", f.platformId);
  if (!f.includeDeleted) out = out.where("deleted_at", "is", null);
  if (f.platformCustomerId !== undefined) out = out.where("platform_customer_id", "=", f.platformCustomerId);
  if (f.customerType !== undefined) out = out.where("customer_type", "=", f.customerType);
  if (f.region !== undefined) out = out.where("region", "=", f.region);
  if (f.umaAddress !== undefined) out = out.where("uma_address", "=", f.umaAddress);
  if (f.currency !== undefined) {
    const currency = f.currency;
    out = out.where(sql<boolean>`currencies @> ${JSON.stringify([currency])}::jsonb`);
  }
  if (f.created?.after) out = out.where("created_at", ">=", f.created.after);
  if (f.created?.before) out = out.where("created_at", "<=", f.created.before);
  if (f.updated?.after) out = out.where("updated_at", ">=", f.updated.after);
  if (f.updated?.before) out = out.where("updated_at", "<=", f.updated.before);
  return out;
}

export async function listCustomers(db: Db, f: CustomerFilter, page: { limit: number; after?: After }): Promise<Customer[]> {
  let q = filtered(db.selectFrom("customers").selectAll(), f);
  const after = page.after;
  if (after) {
    q = q.where((eb: ExpressionBuilder<CustomersKycDatabase, "customers">) => eb(eb.refTuple("created_at", "id"), "<", eb.tuple(after.createdAt, after.id)));
  }
  const rows = await q.orderBy("created_at", "desc").orderBy("id", "desc").limit(page.limit).execute();
  return rows.map(toCustomer);
}

export async function countCustomers(db: Db, f: CustomerFilter): Promise<number> {
  const row = await filtered(db.selectFrom("customers").select((eb) => eb.fn.countAll<bigint | number | string>().as("n")), f).executeTakeFirstOrThrow();
  return Number(row.n);
}
