import { sql, type Kysely } from "kysely";

// The db handed to migrations already targets the agents schema (withSchema). The kit adds the
// outbox, inbox and idempotency_keys tables before this runs (kitMigrations).

export async function up(db: Kysely<any>): Promise<void> {
  // Agents: who acts for which customer, under which policy. Deleted agents stay (their actions
  // stay readable) but nothing finds them by id or token any more.
  await db.schema
    .createTable("agents")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("platform_id", "text", (c) => c.notNull())
    .addColumn("customer_id", "text", (c) => c.notNull())
    .addColumn("platform_customer_id", "text", (c) => c.notNull())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("is_paused", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("is_connected", "boolean", (c) => c.notNull().defaultTo(false))
    // Amounts inside are decimal strings (jsonb has no int8).
    .addColumn("policy", "jsonb", (c) => c.notNull())
    .addColumn("deleted_at", "timestamptz")
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("updated_at", "timestamptz", (c) => c.notNull())
    .execute();
  // ListAgents: newest first within a platform, live agents only.
  await db.schema
    .createIndex("agents_platform_created_idx")
    .on("agents")
    .columns(["platform_id", "created_at", "id"])
    .where(sql.ref("deleted_at"), "is", null)
    .execute();

  // Device codes: the code itself (normalized: 8 characters, no dash) is the key, because redeem
  // names only the code. Old codes stay so that status lookups can say REDEEMED or VOIDED.
  await db.schema
    .createTable("device_codes")
    .addColumn("code", "text", (c) => c.primaryKey())
    .addColumn("platform_id", "text", (c) => c.notNull())
    .addColumn("agent_id", "text", (c) => c.notNull())
    .addColumn("expires_at", "timestamptz", (c) => c.notNull())
    .addColumn("redeemed_at", "timestamptz")
    .addColumn("voided_at", "timestamptz")
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("device_codes_open_idx")
    .on("device_codes")
    .columns(["platform_id", "agent_id"])
    .where(sql<boolean>`redeemed_at is null and voided_at is null`)
    .execute();

  // Access tokens: only the SHA-256 (hex) of the token is stored.
  await db.schema
    .createTable("access_tokens")
    .addColumn("token_hash", "text", (c) => c.primaryKey())
    .addColumn("platform_id", "text", (c) => c.notNull())
    .addColumn("agent_id", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("access_tokens_agent_idx").on("access_tokens").columns(["platform_id", "agent_id"]).execute();

  // Usage: what live (PENDING_APPROVAL and APPROVED) actions reserved per window, in the policy
  // currency. Changed only under the agent's row lock.
  await db.schema
    .createTable("usage")
    .addColumn("platform_id", "text", (c) => c.notNull())
    .addColumn("agent_id", "text", (c) => c.notNull())
    .addColumn("window_kind", "text", (c) => c.notNull().check(sql`window_kind in ('DAY', 'MONTH')`))
    // 2026-11-23 for DAY, 2026-11 for MONTH (UTC, platform clock).
    .addColumn("window_key", "text", (c) => c.notNull())
    .addColumn("count", "int8", (c) => c.notNull().check(sql`count >= 0`))
    .addColumn("amount", "int8", (c) => c.notNull().check(sql`amount >= 0`))
    .addPrimaryKeyConstraint("usage_pkey", ["platform_id", "agent_id", "window_kind", "window_key"])
    .execute();

  // Actions: an agent's money-moving submissions and where each one is.
  await db.schema
    .createTable("actions")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("platform_id", "text", (c) => c.notNull())
    .addColumn("agent_id", "text", (c) => c.notNull())
    .addColumn("customer_id", "text", (c) => c.notNull())
    .addColumn("platform_customer_id", "text", (c) => c.notNull())
    .addColumn("type", "text", (c) => c.notNull().check(sql`type in ('EXECUTE_QUOTE', 'TRANSFER_IN', 'TRANSFER_OUT')`))
    .addColumn("status", "text", (c) => c.notNull().check(sql`status in ('PENDING_APPROVAL', 'APPROVED', 'REJECTED', 'FAILED')`))
    .addColumn("quote_id", "text")
    .addColumn("transaction_id", "text")
    // What moves: the transfer as asked, or the quote's sending side.
    .addColumn("amount", "int8", (c) => c.notNull())
    .addColumn("currency", "text", (c) => c.notNull())
    .addColumn("source_account_id", "text", (c) => c.notNull())
    .addColumn("destination_account_id", "text", (c) => c.notNull())
    .addColumn("description", "text", (c) => c.notNull())
    // The reservation: counted amount (policy currency) in the day and month it was submitted in.
    .addColumn("counted_amount", "int8", (c) => c.notNull().check(sql`counted_amount >= 0`))
    .addColumn("day_key", "text", (c) => c.notNull())
    .addColumn("month_key", "text", (c) => c.notNull())
    // NOT_STARTED → EXECUTING (the call is out) → EXECUTED (its outcome is recorded).
    .addColumn("execution_state", "text", (c) => c.notNull().check(sql`execution_state in ('NOT_STARTED', 'EXECUTING', 'EXECUTED')`))
    .addColumn("execution_claimed_at", "timestamptz")
    .addColumn("rejection_reason", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("failure_reason", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("failure_message", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("expires_at", "timestamptz")
    // The quote and transaction as last seen (protobuf binary): what events carry when they are
    // written inside a transaction, where no other service may be asked.
    .addColumn("quote_snapshot", "bytea")
    .addColumn("transaction_snapshot", "bytea")
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("updated_at", "timestamptz", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("actions_agent_created_idx").on("actions").columns(["platform_id", "agent_id", "created_at", "id"]).execute();
  await db.schema
    .createIndex("actions_pending_created_idx")
    .on("actions")
    .columns(["platform_id", "created_at", "id"])
    .where(sql.ref("status"), "=", "PENDING_APPROVAL")
    .execute();
  await db.schema
    .createIndex("actions_transaction_idx")
    .on("actions")
    .columns(["platform_id", "transaction_id"])
    .where(sql.ref("transaction_id"), "is not", null)
    .execute();
  // One live action per quote: a quote executes once.
  await db.schema
    .createIndex("actions_live_quote_uq")
    .on("actions")
    .columns(["platform_id", "quote_id"])
    .unique()
    .where(sql<boolean>`quote_id is not null and status in ('PENDING_APPROVAL', 'APPROVED')`)
    .execute();
  // The recovery worker's scan.
  await db.schema
    .createIndex("actions_executing_idx")
    .on("actions")
    .column("execution_claimed_at")
    .where(sql.ref("execution_state"), "=", "EXECUTING")
    .execute();
  // The expiry worker's scan: pending quote executions by expiry.
  await db.schema
    .createIndex("actions_pending_expiry_idx")
    .on("actions")
    .columns(["platform_id", "expires_at"])
    .where(sql<boolean>`status = 'PENDING_APPROVAL' and expires_at is not null`)
    .execute();

  // Terminal failures of agent transactions that arrived before the action knew its transaction
  // id (the ledger answered, its event overtook our commit). Recording the outcome looks here.
  await db.schema
    .createTable("transaction_outcomes")
    .addColumn("platform_id", "text", (c) => c.notNull())
    .addColumn("transaction_id", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("failure_reason", "text", (c) => c.notNull())
    .addColumn("snapshot", "bytea", (c) => c.notNull())
    .addColumn("recorded_at", "timestamptz", (c) => c.notNull())
    .addPrimaryKeyConstraint("transaction_outcomes_pkey", ["platform_id", "transaction_id"])
    .execute();
  await db.schema.createIndex("transaction_outcomes_recorded_idx").on("transaction_outcomes").column("recorded_at").execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ["transaction_outcomes", "actions", "usage", "access_tokens", "device_codes", "agents"]) {
    await db.schema.dropTable(t).execute();
  }
}
