import type { Kysely } from "kysely";

// Strong customer authentication factors and logins (issue 27, docs/sca.md): a customer's TOTP
// authenticator (its shared secret sealed at rest like wallet keys) and the customer's
// login-security state (failed logins, lockout).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("sca_factors")
    .addColumn("platform_id", "text", (c) => c.notNull())
    .addColumn("customer_id", "text", (c) => c.notNull())
    // TOTP (the only enrolled factor Corridor issues; SMS_OTP needs no row).
    .addColumn("factor", "text", (c) => c.notNull())
    // The shared secret, AES-256-GCM under the wallet encryption key named by key_id.
    .addColumn("secret_sealed", "bytea", (c) => c.notNull())
    .addColumn("key_id", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    // Null while the enrolment waits for its first code.
    .addColumn("confirmed_at", "timestamptz")
    // The last 30-second step whose code was accepted (a code is good once).
    .addColumn("last_step", "bigint", (c) => c.notNull().defaultTo(0))
    // JSON array of SHA-256 hashes of the unused recovery codes.
    .addColumn("recovery_codes_sha256", "text", (c) => c.notNull().defaultTo("[]"))
    .addPrimaryKeyConstraint("sca_factors_pk", ["platform_id", "customer_id", "factor"])
    .execute();

  await db.schema
    .createTable("sca_login_security")
    .addColumn("platform_id", "text", (c) => c.notNull())
    .addColumn("customer_id", "text", (c) => c.notNull())
    .addColumn("failed_attempts", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("locked_until", "timestamptz")
    .addColumn("suspended", "boolean", (c) => c.notNull().defaultTo(false))
    .addPrimaryKeyConstraint("sca_login_security_pk", ["platform_id", "customer_id"])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("sca_login_security").execute();
  await db.schema.dropTable("sca_factors").execute();
}
