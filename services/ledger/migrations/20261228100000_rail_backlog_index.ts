import { sql, type Kysely } from "kysely";

// The rail backlog gauges (corridor.rail.instructions.*, read at every scrape: data/rail-backlog.ts)
// group the transactions routed to a connector and still waiting for a final outcome; this partial
// index holds only those, so the scrape stays a small scan however long the history grows.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex("transactions_rail_waiting_idx")
    .on("transactions")
    .columns(["connector", "status", "created_at"])
    .where(sql.ref("status"), "in", ["PENDING", "PROCESSING"])
    .where(sql.ref("connector"), "is not", null)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex("transactions_rail_waiting_idx").ifExists().execute();
}
