import type { Kysely } from "kysely";
import type { ApprovalStore, AwaitingApproval } from "../domain/incoming.js";
import type { QuotesFxDatabase } from "./tables.js";

/** incoming_approvals: deadlines of incoming payments awaiting the platform (recorded before the webhook), scoped by platform. */
export function approvalStore(db: Kysely<QuotesFxDatabase>): ApprovalStore {
  return {
    async awaiting(platformId, transactionId) {
      const row = await db
        .selectFrom("incoming_approvals")
        .select(["transaction_id", "platform_id", "deadline", "acknowledged", "requested_fields"])
        .where("platform_id", "=", platformId)
        .where("transaction_id", "=", transactionId)
        .where("state", "=", "AWAITING")
        .executeTakeFirst();
      return row ? toAwaiting(row) : undefined;
    },
    async add(a, now) {
      await db
        .insertInto("incoming_approvals")
        .values({
          transaction_id: a.transactionId,
          platform_id: a.platformId,
          deadline: a.deadline,
          acknowledged: a.acknowledged,
          requested_fields: JSON.stringify(a.requestedFields),
          state: "AWAITING",
          created_at: now,
          updated_at: now,
        })
        .onConflict((oc) =>
          oc
            .column("transaction_id")
            // A row the ledger's event recorded knows neither the deadline nor the fields asked.
            .doUpdateSet({ deadline: a.deadline, requested_fields: JSON.stringify(a.requestedFields), updated_at: now })
            .where("incoming_approvals.deadline", "is", null)
            .where("incoming_approvals.state", "=", "AWAITING"),
        )
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
        .select(["transaction_id", "platform_id", "deadline", "acknowledged", "requested_fields"])
        .where("state", "=", "AWAITING")
        // Rows without a deadline first: they need one before anything else can happen to them.
        .orderBy("deadline", (ob) => ob.asc().nullsFirst())
        .limit(limit)
        .execute();
      return rows.map(toAwaiting);
    },
  };
}

/**
 * Records that an incoming UMA payment awaits its platform's decision, with no deadline yet, inside
 * the inbox transaction of the ledger's INCOMING_PAYMENT_PENDING event. A row that exists (the
 * request path was first, or the payment is decided) is left alone. This closes the window where
 * this service dies after the ledger created the payment but before the request path wrote its row.
 */
export async function recordAwaitingFromEvent(db: Kysely<QuotesFxDatabase>, i: { platformId: string; transactionId: string; now: Date }): Promise<void> {
  await db
    .insertInto("incoming_approvals")
    .values({ transaction_id: i.transactionId, platform_id: i.platformId, deadline: null, acknowledged: false, state: "AWAITING", created_at: i.now, updated_at: i.now })
    .onConflict((oc) => oc.column("transaction_id").doNothing())
    .execute();
}

function toAwaiting(r: { transaction_id: string; platform_id: string; deadline: Date | null; acknowledged: boolean; requested_fields: string[] | string }): AwaitingApproval {
  // pg answers jsonb parsed; PGlite too, but a text fallback keeps both paths honest.
  const fields = typeof r.requested_fields === "string" ? (JSON.parse(r.requested_fields) as string[]) : r.requested_fields;
  return { transactionId: r.transaction_id, platformId: r.platform_id, deadline: r.deadline, acknowledged: r.acknowledged, requestedFields: fields ?? [] };
}
