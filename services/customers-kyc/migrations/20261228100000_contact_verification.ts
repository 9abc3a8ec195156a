import type { Kysely } from "kysely";

// Contact verification (Grid's POST /customers/{id}/verify-email|verify-phone and their /confirm):
// the customer remembers which address it verified (verified while it still equals the address
// on file, so a changed email is PENDING again); a sent code is stored only as a SHA-256 with its
// attempt counter, one row per customer and channel (a new send replaces it).

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("customers").addColumn("verified_email", "text").execute();
  await db.schema
    .createTable("contact_verification_codes")
    .addColumn("platform_id", "text", (c) => c.notNull())
    .addColumn("customer_id", "text", (c) => c.notNull().references("customers.id"))
    .addColumn("channel", "text", (c) => c.notNull())
    .addColumn("sent_to", "text", (c) => c.notNull())
    .addColumn("code_sha256", "text", (c) => c.notNull())
    .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("expires_at", "timestamptz", (c) => c.notNull())
    .addPrimaryKeyConstraint("contact_verification_codes_pk", ["platform_id", "customer_id", "channel"])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("contact_verification_codes").execute();
  await db.schema.alterTable("customers").dropColumn("verified_email").execute();
}
