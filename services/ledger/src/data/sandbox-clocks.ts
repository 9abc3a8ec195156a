import { sql, type Kysely, type Transaction } from "kysely";
import type { LedgerDatabase } from "./tables.js";

type Db = Kysely<LedgerDatabase> | Transaction<LedgerDatabase>;

/** Records a platform's sandbox clock offset; offsets only grow, so a late (older) event changes nothing. */
export async function recordSandboxOffset(db: Db, platformId: string, offsetMs: bigint, at: Date): Promise<void> {
  await db
    .insertInto("sandbox_clocks")
    .values({ platform_id: platformId, offset_ms: offsetMs, updated_at: at })
    .onConflict((oc) =>
      oc.column("platform_id").doUpdateSet({
        offset_ms: sql`greatest(sandbox_clocks.offset_ms, excluded.offset_ms)`,
        updated_at: sql`case when excluded.offset_ms > sandbox_clocks.offset_ms then excluded.updated_at else sandbox_clocks.updated_at end`,
      }),
    )
    .execute();
}

/** How far the platform's clock runs ahead of real time (0: never advanced, or not a sandbox platform). */
export async function sandboxOffsetMs(db: Db, platformId: string): Promise<bigint> {
  const row = await db.selectFrom("sandbox_clocks").select("offset_ms").where("platform_id", "=", platformId).executeTakeFirst();
  return row ? BigInt(row.offset_ms) : 0n;
}

/** PENDING and PENDING_AUTHORIZATION quote transactions (and CREATED lookup transactions) of one platform whose expires_at is at or before `at` (its platform time). */
export async function dueQuoteTransactionsOf(db: Db, platformId: string, at: Date, limit: number) {
  return db
    .selectFrom("transactions")
    .select(["platform_id", "id", "expires_at"])
    .where("platform_id", "=", platformId)
    .where("type", "=", "OUTGOING")
    .where((eb) => eb.or([eb.and([eb("status", "=", "PENDING"), eb("quote_id", "is not", null)]), eb.and([eb("status", "=", "PENDING_AUTHORIZATION"), eb("quote_id", "is not", null)]), eb.and([eb("status", "=", "CREATED"), eb("lookup_id", "is not", null)])]))
    .where("expires_at", "<=", at)
    .orderBy("expires_at")
    .orderBy("id")
    .limit(limit)
    .execute();
}
