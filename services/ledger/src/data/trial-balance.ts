import { sql } from "kysely";
import type { Db } from "./accounts.js";

export type { TrialBalanceRow } from "../domain/model.js";
import type { TrialBalanceRow } from "../domain/model.js";

/**
 * Sums balances and postings per currency, owner kind and account type, for one platform or the
 * whole ledger. One statement, so one snapshot: a money transaction committing meanwhile is either
 * wholly in it or wholly out, and the sums stay exact while transfers run.
 */
export async function trialBalanceRows(db: Db, platformId?: string): Promise<TrialBalanceRow[]> {
  let posted = db
    .selectFrom("postings")
    .select(["account_id", sql<string>`sum(amount)`.as("posted")])
    .groupBy("account_id");
  if (platformId) posted = posted.where("platform_id", "=", platformId);
  let q = db
    .selectFrom("accounts as a")
    .leftJoin(posted.as("p"), "p.account_id", "a.id")
    .select([
      "a.currency",
      "a.owner_kind",
      "a.type",
      // As text: Postgres sums int8 into numeric, which drivers hand back in different shapes.
      sql<string>`count(*)::text`.as("accounts"),
      sql<string>`coalesce(sum(a.balance), 0)::text`.as("balance"),
      sql<string>`coalesce(sum(p.posted), 0)::text`.as("posted"),
      sql<string>`(count(*) filter (where a.balance <> coalesce(p.posted, 0)))::text`.as("mismatched"),
    ])
    .groupBy(["a.currency", "a.owner_kind", "a.type"])
    .orderBy("a.currency")
    .orderBy("a.owner_kind")
    .orderBy("a.type");
  if (platformId) q = q.where("a.platform_id", "=", platformId);
  const rows = await q.execute();
  return rows.map((r) => ({
    currency: r.currency,
    ownerKind: r.owner_kind,
    type: r.type,
    accounts: BigInt(r.accounts),
    balance: BigInt(r.balance),
    posted: BigInt(r.posted),
    mismatched: BigInt(r.mismatched),
  }));
}

/** True when the ledger has heard of the platform. */
export async function platformKnown(db: Db, platformId: string): Promise<boolean> {
  return !!(await db.selectFrom("platforms").select("id").where("id", "=", platformId).executeTakeFirst());
}
