import type { Kysely } from "kysely";
import type { ProductionRateStore, StoredRate } from "../domain/production-rates.js";
import type { QuotesFxDatabase } from "./tables.js";

export type { ProductionRateStore, StoredRate };

/** The production rate table: one row per currency, replaced only by a rate at least as recent. */
export function productionRateStore(db: Kysely<QuotesFxDatabase>): ProductionRateStore {
  return {
    async all(): Promise<StoredRate[]> {
      return db.selectFrom("production_rates").select(["currency", "usd_value", "source", "as_of"]).orderBy("currency").execute();
    },
    /** Records rates; a currency keeps its row when that row's rate is newer than the one offered. Returns how many changed. */
    async record(rates: readonly StoredRate[], recordedAt: Date): Promise<number> {
      if (rates.length === 0) return 0;
      const r = await db
        .insertInto("production_rates")
        .values(rates.map((x) => ({ ...x, recorded_at: recordedAt })))
        .onConflict((c) =>
          c.column("currency").doUpdateSet((eb) => ({
            usd_value: eb.ref("excluded.usd_value"),
            source: eb.ref("excluded.source"),
            as_of: eb.ref("excluded.as_of"),
            recorded_at: eb.ref("excluded.recorded_at"),
          })).where("production_rates.as_of", "<=", (eb) => eb.ref("excluded.as_of")),
        )
        .executeTakeFirst();
      return Number(r.numInsertedOrUpdatedRows ?? 0n);
    },
  };
}
