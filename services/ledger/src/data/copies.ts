import { syncCustomerAccountStatus } from "./accounts.js";
import type { Db, Trx } from "./tables.js";

/**
 * The ledger's event-fed copies of other services' facts: platforms (corridor.platforms.v1) and
 * customers (corridor.customers.records.v1). Written by the consumers inside their inbox transaction,
 * read by the use cases instead of asking auth-sessions / customers-kyc on every request.
 */

export async function upsertPlatformCopy(trx: Trx, p: { platformId: string; environment?: string; currencies: string[]; at: Date }): Promise<void> {
  await trx
    .insertInto("platforms")
    .values({ id: p.platformId, environment: p.environment ?? "UNKNOWN", supported_currencies: JSON.stringify(p.currencies), updated_at: p.at })
    .onConflict((oc) =>
      oc.column("id").doUpdateSet((eb) => ({
        supported_currencies: eb.ref("excluded.supported_currencies"),
        updated_at: eb.ref("excluded.updated_at"),
        ...(p.environment ? { environment: eb.ref("excluded.environment") } : {}),
      })),
    )
    .execute();
}

/** Writes the customer's copy; answers whether the ledger has closed it (closed customers get no new accounts). */
export async function upsertCustomerCopy(
  trx: Trx,
  c: { platformId: string; customerId: string; platformCustomerId: string; currencies: string[]; isDeleted: boolean; verificationStatus?: string; at: Date },
): Promise<{ closed: boolean }> {
  await trx
    .insertInto("customers")
    .values({
      id: c.customerId,
      platform_id: c.platformId,
      platform_customer_id: c.platformCustomerId,
      currencies: JSON.stringify(c.currencies),
      is_deleted: c.isDeleted,
      updated_at: c.at,
      verification_status: c.verificationStatus || null,
    })
    .onConflict((oc) =>
      oc.column("id").doUpdateSet((eb) => ({
        platform_customer_id: eb.ref("excluded.platform_customer_id"),
        currencies: eb.ref("excluded.currencies"),
        is_deleted: eb.ref("excluded.is_deleted"),
        updated_at: eb.ref("excluded.updated_at"),
        // An event without a status (older producers, partial summaries) keeps the one we know.
        ...(c.verificationStatus ? { verification_status: eb.ref("excluded.verification_status") } : {}),
      })),
    )
    .execute();
  await syncCustomerAccountStatus(trx, c.platformId, c.customerId);
  const copy = await trx.selectFrom("customers").select("closed_at").where("platform_id", "=", c.platformId).where("id", "=", c.customerId).executeTakeFirst();
  return { closed: !!copy?.closed_at };
}

/** The platform's environment as its events said; undefined when no event (with one) has arrived. */
export async function platformEnvironmentCopy(db: Db, platformId: string): Promise<"SANDBOX" | "PRODUCTION" | undefined> {
  const row = await db.selectFrom("platforms").select("environment").where("id", "=", platformId).executeTakeFirst();
  return row?.environment === "SANDBOX" || row?.environment === "PRODUCTION" ? row.environment : undefined;
}

/** The ledger's copy of a customer, as its events said. */
export type CustomerCopy = { platformCustomerId: string; verificationStatus: string | null; isDeleted: boolean };

/** The customer as its events said; undefined when none has arrived yet. */
export async function customerCopy(db: Db, platformId: string, customerId: string): Promise<CustomerCopy | undefined> {
  const row = await db
    .selectFrom("customers")
    .select(["platform_customer_id", "verification_status", "is_deleted"])
    .where("platform_id", "=", platformId)
    .where("id", "=", customerId)
    .executeTakeFirst();
  return row && copyOfCustomer(row);
}

/** A customers row as a copy; undefined for a row created by GetCustomerHoldings before any event (empty platform_customer_id, no status). */
export function copyOfCustomer(row: { platform_customer_id: string; verification_status: string | null; is_deleted: boolean }): CustomerCopy | undefined {
  if (!row.platform_customer_id && !row.verification_status) return undefined;
  // closed_at is not read here: a closed customer is refused under its row lock inside the money
  // transaction (data/customers.ts requireOpenCustomer), as before.
  return { platformCustomerId: row.platform_customer_id, verificationStatus: row.verification_status, isDeleted: row.is_deleted };
}
