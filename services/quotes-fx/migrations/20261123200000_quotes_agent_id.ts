import type { Kysely } from "kysely";

// The db handed to migrations already targets the quotes_fx schema (withSchema).
// Agent:<uuidv7> of the agent that created the quote (docs/agents.md); null for platform quotes.
// GetQuote / ExecuteQuote with an agent_id find only that agent's quotes.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("quotes").addColumn("agent_id", "text").execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("quotes").dropColumn("agent_id").execute();
}
