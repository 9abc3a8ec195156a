import { errors } from "@corridor/kit";
import type { Transaction } from "kysely";
import { syncCustomerAccountStatus } from "./accounts.js";
import type { LedgerDatabase } from "./tables.js";

type Trx = Transaction<LedgerDatabase>;

/**
 * The customer gate of every money movement to or from a customer, inside the movement's
 * transaction and before any account lock: a share lock on the ledger's copy of the customer, so
 * closing it (which takes the row FOR UPDATE) waits for movements in progress and movements wait
 * for a close in progress. A closed or deleted customer is NOT_FOUND USER_NOT_FOUND: money for it is
 * refused, never parked. A customer the ledger has not heard of yet has no accounts, so nothing to guard.
 */
export async function requireOpenCustomer(trx: Trx, platformId: string, customerId: string): Promise<void> {
  const row = await trx
    .selectFrom("customers")
    .select(["closed_at", "is_deleted"])
    .where("platform_id", "=", platformId)
    .where("id", "=", customerId)
    .forShare()
    .executeTakeFirst();
  if (row && (row.closed_at || row.is_deleted)) throw errors.notFound("Customer", customerId);
}

/** True when the customer is closed or deleted (share-locks the row like requireOpenCustomer). */
export async function customerClosed(trx: Trx, platformId: string, customerId: string): Promise<boolean> {
  const row = await trx
    .selectFrom("customers")
    .select(["closed_at", "is_deleted"])
    .where("platform_id", "=", platformId)
    .where("id", "=", customerId)
    .forShare()
    .executeTakeFirst();
  return !!row && (!!row.closed_at || row.is_deleted);
}

export type { CustomerHoldings } from "../domain/model.js";
import type { CustomerHoldings } from "../domain/model.js";

/**
 * What the customer holds, read under its row lock (FOR UPDATE; the row is created when the
 * ledger has not heard of the customer yet), and, with `close`, the customer closed when it holds
 * nothing, in the same transaction.
 */
export async function holdingsOf(trx: Trx, c: { platformId: string; customerId: string; close: boolean; now: Date }): Promise<CustomerHoldings> {
  // A customer the consumer has not copied yet gets its row now (closed ones never open accounts later).
  await trx
    .insertInto("customers")
    .values({ id: c.customerId, platform_id: c.platformId, platform_customer_id: "", currencies: "[]", is_deleted: false, updated_at: new Date(0), closed_at: null })
    .onConflict((oc) => oc.column("id").doNothing())
    .execute();
  const row = await trx
    .selectFrom("customers")
    .select(["closed_at", "is_deleted"])
    .where("platform_id", "=", c.platformId)
    .where("id", "=", c.customerId)
    .forUpdate()
    .executeTakeFirst();
  // Not there after the insert: the id is another platform's customer.
  if (!row) throw errors.notFound("Customer", c.customerId);

  const accounts = await trx
    .selectFrom("accounts")
    .select(["id", "type", "currency", "balance", "held"])
    .where("platform_id", "=", c.platformId)
    .where("owner_kind", "=", "CUSTOMER")
    .where("customer_id", "=", c.customerId)
    .where((eb) => eb.or([eb("balance", "!=", 0n), eb("held", "!=", 0n)]))
    .orderBy("id")
    .execute();
  const inFlight = await trx
    .selectFrom("transactions")
    .select(["id", "type", "status", "amount", "currency", "refund_status"])
    .where("platform_id", "=", c.platformId)
    .where("customer_id", "=", c.customerId)
    .where((eb) => eb.or([eb("status", "in", ["PENDING_AUTHORIZATION", "PENDING", "PROCESSING"]), eb("refund_status", "=", "PENDING")]))
    .orderBy("created_at")
    .orderBy("id")
    .execute();

  let closed = !!row.closed_at || row.is_deleted;
  if (c.close && !closed && accounts.length === 0 && inFlight.length === 0) {
    await trx.updateTable("customers").set({ closed_at: c.now }).where("platform_id", "=", c.platformId).where("id", "=", c.customerId).execute();
    await syncCustomerAccountStatus(trx, c.platformId, c.customerId);
    closed = true;
  }
  return {
    accounts: accounts.map((a) => ({ accountId: a.id, type: a.type, currency: a.currency, balance: BigInt(a.balance), held: BigInt(a.held) })),
    inFlight: inFlight.map((t) => ({ transactionId: t.id, type: t.type, status: t.status, amount: BigInt(t.amount), currency: t.currency, refundStatus: t.refund_status ?? "" })),
    closed,
  };
}
