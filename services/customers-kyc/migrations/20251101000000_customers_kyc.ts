import { sql, type Kysely } from "kysely";

// The db handed to migrations already targets the customers_kyc schema (withSchema), so table
// names are unqualified here.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("customers")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("platform_id", "text", (c) => c.notNull())
    .addColumn("platform_customer_id", "text", (c) => c.notNull())
    .addColumn("customer_type", "text", (c) => c.notNull().check(sql`customer_type in ('INDIVIDUAL', 'BUSINESS')`))
    // Empty when the platform has no UMA domain and none was given.
    .addColumn("uma_address", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("region", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("currencies", "jsonb", (c) => c.notNull())
    .addColumn("email", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("verification_status", "text", (c) =>
      c.notNull().check(sql`verification_status in ('UNVERIFIED', 'PENDING', 'APPROVED', 'REJECTED')`),
    )
    .addColumn("full_name", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("birth_date", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("nationality", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("address", "jsonb")
    .addColumn("business_info", "jsonb")
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("updated_at", "timestamptz", (c) => c.notNull())
    .addColumn("deleted_at", "timestamptz")
    .execute();
  // Unique among live customers only: a deleted customer's ids may be reused by a new one.
  await db.schema
    .createIndex("customers_platform_customer_id_live_uq")
    .on("customers")
    .columns(["platform_id", "platform_customer_id"])
    .unique()
    .where(sql.ref("deleted_at"), "is", null)
    .execute();
  await db.schema
    .createIndex("customers_uma_address_live_uq")
    .on("customers")
    .columns(["platform_id", "uma_address"])
    .unique()
    .where(sql<boolean>`deleted_at is null and uma_address <> ''`)
    .execute();
  // ListCustomers: newest first, keyset on (created_at, id).
  await db.schema.createIndex("customers_platform_created_idx").on("customers").columns(["platform_id", "created_at desc", "id desc"]).execute();

  await db.schema
    .createTable("verifications")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("platform_id", "text", (c) => c.notNull())
    .addColumn("customer_id", "text", (c) => c.notNull().references("customers.id"))
    .addColumn("verification_status", "text", (c) =>
      c.notNull().check(sql`verification_status in ('RESOLVE_ERRORS', 'PENDING', 'APPROVED', 'REJECTED')`),
    )
    .addColumn("errors", "jsonb", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("updated_at", "timestamptz", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("verifications_platform_created_idx").on("verifications").columns(["platform_id", "created_at desc", "id desc"]).execute();
  await db.schema.createIndex("verifications_customer_idx").on("verifications").columns(["platform_id", "customer_id"]).execute();

  await db.schema
    .createTable("beneficial_owners")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("platform_id", "text", (c) => c.notNull())
    .addColumn("customer_id", "text", (c) => c.notNull().references("customers.id"))
    .addColumn("roles", "jsonb", (c) => c.notNull())
    .addColumn("ownership_percentage", "integer", (c) => c.notNull().check(sql`ownership_percentage between 0 and 100`))
    .addColumn("personal_info", "jsonb", (c) => c.notNull())
    .addColumn("kyc_status", "text", (c) => c.notNull().check(sql`kyc_status in ('UNVERIFIED', 'PENDING', 'APPROVED', 'REJECTED')`))
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("updated_at", "timestamptz", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("beneficial_owners_customer_idx")
    .on("beneficial_owners")
    .columns(["platform_id", "customer_id", "created_at desc", "id desc"])
    .execute();

  await db.schema
    .createTable("invitations")
    .addColumn("code", "text", (c) => c.primaryKey())
    .addColumn("platform_id", "text", (c) => c.notNull())
    .addColumn("inviter_customer_id", "text", (c) => c.notNull().references("customers.id"))
    .addColumn("inviter_uma", "text", (c) => c.notNull())
    // Stored states only; EXPIRED is derived from expires_at when read.
    .addColumn("status", "text", (c) => c.notNull().check(sql`status in ('PENDING', 'CLAIMED', 'CANCELLED')`))
    .addColumn("first_name", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("amount_to_send", "int8")
    .addColumn("amount_currency", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("invitee_uma", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("expires_at", "timestamptz")
    .addColumn("claimed_at", "timestamptz")
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("updated_at", "timestamptz", (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("invitations").execute();
  await db.schema.dropTable("beneficial_owners").execute();
  await db.schema.dropTable("verifications").execute();
  await db.schema.dropTable("customers").execute();
}
