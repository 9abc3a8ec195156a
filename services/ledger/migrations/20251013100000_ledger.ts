import { sql, type Kysely } from "kysely";

// The db handed to migrations already targets the ledger schema (withSchema).

export async function up(db: Kysely<any>): Promise<void> {
  // Copies of other services' facts, kept by consumers (never read across schemas).
  await db.schema
    .createTable("platforms")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("environment", "text", (c) => c.notNull())
    .addColumn("supported_currencies", "jsonb", (c) => c.notNull())
    .addColumn("updated_at", "timestamptz", (c) => c.notNull())
    .execute();
  await db.schema
    .createTable("customers")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("platform_id", "text", (c) => c.notNull())
    .addColumn("platform_customer_id", "text", (c) => c.notNull())
    .addColumn("currencies", "jsonb", (c) => c.notNull())
    .addColumn("is_deleted", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull())
    .execute();

  // Every account that can carry a balance: customer and platform internal accounts and the
  // per-platform, per-currency system accounts (rail clearing, sandbox funding).
  await db.schema
    .createTable("accounts")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("platform_id", "text", (c) => c.notNull())
    .addColumn("owner_kind", "text", (c) => c.notNull().check(sql`owner_kind in ('CUSTOMER', 'PLATFORM', 'SYSTEM')`))
    // customer id, 'PLATFORM' or 'SYSTEM': one account per (owner, currency, type).
    .addColumn("owner_key", "text", (c) => c.notNull())
    .addColumn("customer_id", "text")
    .addColumn("type", "text", (c) => c.notNull())
    .addColumn("currency", "text", (c) => c.notNull())
    .addColumn("balance", "int8", (c) => c.notNull().defaultTo(0))
    .addColumn("held", "int8", (c) => c.notNull().defaultTo(0))
    .addColumn("reference", "text", (c) => c.notNull().unique())
    .addColumn("funding_instructions", "jsonb", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("updated_at", "timestamptz", (c) => c.notNull())
    // The last line of defence of "no customer or platform balance below zero": the code checks
    // first and answers 400, this makes a bug fail the transaction instead of losing money.
    .addCheckConstraint("accounts_held_nonneg", sql`held >= 0`)
    .addCheckConstraint("accounts_nonneg", sql`owner_kind = 'SYSTEM' or (balance >= 0 and balance - held >= 0)`)
    .execute();
  await db.schema.createIndex("accounts_owner_uq").on("accounts").columns(["platform_id", "owner_key", "currency", "type"]).unique().execute();
  await db.schema.createIndex("accounts_list_idx").on("accounts").columns(["platform_id", "owner_kind", "created_at", "id"]).execute();

  await db.schema
    .createTable("journal_entries")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("platform_id", "text", (c) => c.notNull())
    .addColumn("transaction_id", "text")
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .execute();
  await db.schema
    .createTable("postings")
    .addColumn("id", "bigserial", (c) => c.primaryKey())
    .addColumn("entry_id", "text", (c) => c.notNull().references("journal_entries.id"))
    .addColumn("platform_id", "text", (c) => c.notNull())
    .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id"))
    .addColumn("currency", "text", (c) => c.notNull())
    .addColumn("amount", "int8", (c) => c.notNull().check(sql`amount <> 0`))
    .execute();
  await db.schema.createIndex("postings_account_idx").on("postings").columns(["account_id", "id"]).execute();
  await db.schema.createIndex("postings_entry_idx").on("postings").column("entry_id").execute();

  await db.schema
    .createTable("holds")
    .addColumn("id", "bigserial", (c) => c.primaryKey())
    .addColumn("platform_id", "text", (c) => c.notNull())
    .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id"))
    .addColumn("transaction_id", "text", (c) => c.notNull().unique())
    .addColumn("amount", "int8", (c) => c.notNull().check(sql`amount > 0`))
    .addColumn("status", "text", (c) => c.notNull().check(sql`status in ('ACTIVE', 'RELEASED', 'CAPTURED')`))
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("updated_at", "timestamptz", (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("external_accounts")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("platform_id", "text", (c) => c.notNull())
    .addColumn("owner_kind", "text", (c) => c.notNull().check(sql`owner_kind in ('CUSTOMER', 'PLATFORM')`))
    .addColumn("customer_id", "text")
    .addColumn("currency", "text", (c) => c.notNull())
    .addColumn("account_type", "text", (c) => c.notNull())
    .addColumn("account_info", "jsonb", (c) => c.notNull())
    .addColumn("platform_account_id", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("default_uma_deposit_account", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("beneficiary_verification_status", "text", (c) => c.notNull())
    .addColumn("beneficiary_verified_data", "jsonb")
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("updated_at", "timestamptz", (c) => c.notNull())
    .addColumn("deleted_at", "timestamptz")
    .execute();
  await db.schema
    .createIndex("external_accounts_list_idx")
    .on("external_accounts")
    .columns(["platform_id", "owner_kind", "created_at desc", "id desc"])
    .where(sql.ref("deleted_at"), "is", null)
    .execute();
  // At most one default UMA deposit account per customer.
  await db.schema
    .createIndex("external_accounts_default_uq")
    .on("external_accounts")
    .columns(["platform_id", "customer_id"])
    .unique()
    .where(sql.ref("default_uma_deposit_account"), "=", true)
    .where(sql.ref("deleted_at"), "is", null)
    .execute();

  await db.schema
    .createTable("transactions")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("platform_id", "text", (c) => c.notNull())
    .addColumn("type", "text", (c) => c.notNull().check(sql`type in ('INCOMING', 'OUTGOING')`))
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("source_account_id", "text", (c) => c.notNull())
    .addColumn("destination_account_id", "text", (c) => c.notNull())
    .addColumn("internal_account_id", "text", (c) => c.notNull().references("accounts.id"))
    .addColumn("external_account_id", "text", (c) => c.notNull().references("external_accounts.id"))
    .addColumn("customer_id", "text")
    .addColumn("platform_customer_id", "text")
    .addColumn("amount", "int8", (c) => c.notNull().check(sql`amount > 0`))
    .addColumn("currency", "text", (c) => c.notNull())
    .addColumn("reference", "text", (c) => c.notNull())
    .addColumn("description", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("agent_id", "text")
    .addColumn("failure_reason", "text")
    .addColumn("failure_detail", "text")
    .addColumn("settled_at", "timestamptz")
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("updated_at", "timestamptz", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("transactions_reference_uq").on("transactions").columns(["platform_id", "reference"]).unique().execute();
  await db.schema.createIndex("transactions_list_idx").on("transactions").columns(["platform_id", "created_at", "id"]).execute();
  await db.schema.createIndex("transactions_customer_idx").on("transactions").columns(["platform_id", "customer_id", "created_at"]).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ["transactions", "external_accounts", "holds", "postings", "journal_entries", "accounts", "customers", "platforms"]) {
    await db.schema.dropTable(t).execute();
  }
}
