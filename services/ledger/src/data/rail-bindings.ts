import type { RailBindingRow } from "../domain/model.js";
import type { Db } from "./tables.js";

/** Sets a binding (insert, or replace the connector of the same platform, currency and rail). */
export async function upsertRailBinding(db: Db, b: Omit<RailBindingRow, "created_at" | "updated_at">, now: Date): Promise<RailBindingRow> {
  return db
    .insertInto("rail_bindings")
    .values({ ...b, created_at: now, updated_at: now })
    .onConflict((oc) => oc.columns(["platform_id", "currency", "payment_rail"]).doUpdateSet({ connector: b.connector, source: b.source, updated_at: now }))
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function deleteRailBinding(db: Db, platformId: string, currency: string, paymentRail: string): Promise<boolean> {
  const r = await db.deleteFrom("rail_bindings").where("platform_id", "=", platformId).where("currency", "=", currency).where("payment_rail", "=", paymentRail).executeTakeFirst();
  return r.numDeletedRows > 0n;
}

/** A platform's bindings (or everyone's), by platform, currency, rail. */
export async function listRailBindings(db: Db, platformId?: string): Promise<RailBindingRow[]> {
  let q = db.selectFrom("rail_bindings").selectAll();
  if (platformId) q = q.where("platform_id", "=", platformId);
  return q.orderBy("platform_id").orderBy("currency").orderBy("payment_rail").execute();
}

/** The bindings of one platform and currency. */
export async function railBindingsOf(db: Db, platformId: string, currency: string): Promise<RailBindingRow[]> {
  return db.selectFrom("rail_bindings").selectAll().where("platform_id", "=", platformId).where("currency", "=", currency).execute();
}
