import type { Trx } from "./tables.js";

/**
 * Withdraws a transaction's rail instruction while it is still only in the ledger's outbox: the row
 * (topic, key = transaction id) no relay has published or leased. It is locked `for update skip
 * locked`: a relay leasing it right now holds it, so it is skipped and the answer is false (the
 * hand-off won); once this transaction has it, a relay's lease skips it in turn, and the delete
 * commits with the cancellation. True when the row was withdrawn (the connector never sees it),
 * false when it is gone to (or going to) the bus.
 *
 * A row a relay leased is the rail's from then on, even when the lease was given back after a
 * failed publish (the publish may have reached the bus): the kit's relay keeps `leased_by` on a row
 * it gives back, so only a row never leased is withdrawn.
 */
export async function withdrawRailInstruction(trx: Trx, transactionId: string, topic: string): Promise<boolean> {
  const row = await trx
    .selectFrom("outbox")
    .select("id")
    .where("topic", "=", topic)
    .where("key", "=", transactionId)
    .where("published_at", "is", null)
    .where("leased_by", "is", null)
    .forUpdate()
    .skipLocked()
    .executeTakeFirst();
  if (!row) return false;
  const deleted = await trx.deleteFrom("outbox").where("id", "=", row.id).where("published_at", "is", null).where("leased_by", "is", null).executeTakeFirst();
  return Number(deleted.numDeletedRows) === 1;
}
