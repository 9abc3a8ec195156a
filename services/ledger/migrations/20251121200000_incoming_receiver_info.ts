import { type Kysely } from "kysely";

// Incoming UMA payments keep the receiver data the platform gave with its approval (issue 5).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("transactions").addColumn("receiver_customer_info", "jsonb").execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("transactions").dropColumn("receiver_customer_info").execute();
}
