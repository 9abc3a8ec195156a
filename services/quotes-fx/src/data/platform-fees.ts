import type { Kysely } from "kysely";
import type { FeeRules, PlatformFeeStore } from "../domain/fees.js";
import type { QuotesFxDatabase } from "./tables.js";

/** The operator's fee rules per platform: one row each, the rules as JSON. */
export function platformFeeStore(db: Kysely<QuotesFxDatabase>): PlatformFeeStore {
  return {
    async get(platformId) {
      const row = await db.selectFrom("platform_fee_rules").select("rules").where("platform_id", "=", platformId).executeTakeFirst();
      return row ? (row.rules as FeeRules) : undefined;
    },
    async set(platformId, rules, now) {
      await db
        .insertInto("platform_fee_rules")
        .values({ platform_id: platformId, rules: JSON.stringify(rules), updated_at: now })
        .onConflict((c) => c.column("platform_id").doUpdateSet({ rules: JSON.stringify(rules), updated_at: now }))
        .execute();
    },
    async clear(platformId) {
      const r = await db.deleteFrom("platform_fee_rules").where("platform_id", "=", platformId).executeTakeFirst();
      return Number(r.numDeletedRows) > 0;
    },
  };
}
