import type { Kysely } from "kysely";

// SCA factor resets (issue 27, docs/sca.md "Factor reset"): a liveness-gated reset of a lost
// factor, the liveness checks of the operator's review queue (the selfie a production customer
// submits, stored beside its SHA-256), and the mobile number an SMS_OTP reset enrols.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("sca_factor_resets")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("platform_id", "text", (c) => c.notNull())
    .addColumn("customer_id", "text", (c) => c.notNull())
    // SMS_OTP or TOTP.
    .addColumn("factor", "text", (c) => c.notNull())
    // INITIATED, PENDING_REVIEW, LIVENESS_PASSED, COMPLETED, REJECTED (EXPIRED is derived from expires_at).
    .addColumn("status", "text", (c) => c.notNull())
    // Platform time (a sandbox clock advance expires a reset).
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("expires_at", "timestamptz", (c) => c.notNull())
    .addColumn("updated_at", "timestamptz", (c) => c.notNull())
    // Service-clock time of the start: the 5-per-24-hours limit counts these.
    .addColumn("started_at", "timestamptz", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("sca_factor_resets_customer_started").on("sca_factor_resets").columns(["platform_id", "customer_id", "started_at"]).execute();

  await db.schema
    .createTable("sca_liveness_checks")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("platform_id", "text", (c) => c.notNull())
    .addColumn("customer_id", "text", (c) => c.notNull())
    .addColumn("reset_id", "text", (c) => c.notNull().references("sca_factor_resets.id"))
    .addColumn("environment", "text", (c) => c.notNull())
    // AWAITING_SUBMISSION, SUBMITTED, APPROVED, REJECTED.
    .addColumn("status", "text", (c) => c.notNull())
    // SHA-256 (hex) of the hosted page's token; the token is never stored.
    .addColumn("token_sha256", "text", (c) => c.notNull().unique())
    .addColumn("reason", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("selfie", "bytea")
    .addColumn("selfie_content_type", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("selfie_sha256", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("selfie_size_bytes", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("submitted_at", "timestamptz")
    .addColumn("decided_at", "timestamptz")
    .addColumn("expires_at", "timestamptz", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("sca_liveness_checks_status").on("sca_liveness_checks").columns(["status", "created_at"]).execute();

  await db.schema
    .createTable("sca_mobile_numbers")
    .addColumn("platform_id", "text", (c) => c.notNull())
    .addColumn("customer_id", "text", (c) => c.notNull())
    .addColumn("country_code", "text", (c) => c.notNull())
    .addColumn("number", "text", (c) => c.notNull())
    .addColumn("enrolled_at", "timestamptz", (c) => c.notNull())
    .addPrimaryKeyConstraint("sca_mobile_numbers_pk", ["platform_id", "customer_id"])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("sca_mobile_numbers").execute();
  await db.schema.dropTable("sca_liveness_checks").execute();
  await db.schema.dropTable("sca_factor_resets").execute();
}
