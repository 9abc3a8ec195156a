import type { Kysely } from "kysely";
import type { ApprovalStore } from "../domain/incoming.js";
import type { QuotesFxDatabase } from "./tables.js";

/** incoming_approvals: deadlines of incoming payments awaiting the platform (recorded before the webhook), scoped by platform. */
export function approvalStore(db: Kysely<QuotesFxDatabase>): ApprovalStore {
  return {
    async awaiting(platformId, transactionId) {
      const row = await db
        .selectFrom("incoming_approvals")
        .select(["transaction_id", "platform_id", "deadline", "acknowledged"])
        .where("platform_id", "=", platformId)
        .where("transaction_id", "=", transactionId)
        .where("state", "=", "AWAITING")
        .executeTakeFirst();
      return row ? { transactionId: row.transaction_id, platformId: row.platform_id, deadline: row.deadline, acknowledged: row.acknowledged } : undefined;
    },
    async add(a, now) {
      await db
        .insertInto("incoming_approvals")
        .values({ transaction_id: a.transactionId, platform_id: a.platformId, deadline: a.deadline, acknowledged: a.acknowledged, state: "AWAITING", created_at: now, updated_at: now })
        .onConflict((oc) => oc.column("transaction_id").doNothing())
        .execute();
    },
    async acknowledge(platformId, transactionId, deadline, now) {
      await db
        .updateTable("incoming_approvals")
        .set({ acknowledged: true, deadline, updated_at: now })
        .where("platform_id", "=", platformId)
        .where("transaction_id", "=", transactionId)
        .where("state", "=", "AWAITING")
        .execute();
    },
    async done(platformId, transactionId, now) {
      await db
        .updateTable("incoming_approvals")
        .set({ state: "DONE", updated_at: now })
        .where("platform_id", "=", platformId)
        .where("transaction_id", "=", transactionId)
        .execute();
    },
    async allAwaiting(limit) {
      const rows = await db
        .selectFrom("incoming_approvals")
        .select(["transaction_id", "platform_id", "deadline", "acknowledged"])
        .where("state", "=", "AWAITING")
        .orderBy("deadline", "asc")
        .limit(limit)
        .execute();
      return rows.map((r) => ({ transactionId: r.transaction_id, platformId: r.platform_id, deadline: r.deadline, acknowledged: r.acknowledged }));
    },
  };
}
