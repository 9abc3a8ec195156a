import type { Kysely } from "kysely";

// Strong customer authentication (issue 27, docs/sca.md): the one-time-code challenges other
// services' operations wait on (a quote in PENDING_AUTHORIZATION), and trusted beneficiaries.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("sca_challenges")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("platform_id", "text", (c) => c.notNull())
    .addColumn("customer_id", "text", (c) => c.notNull())
    // What waits on it: QUOTE (Quote:<uuidv7>), TRUST_BENEFICIARY / UNTRUST_BENEFICIARY (ExternalAccount:<uuidv7>).
    .addColumn("subject_type", "text", (c) => c.notNull())
    .addColumn("subject_id", "text", (c) => c.notNull())
    .addColumn("factor", "text", (c) => c.notNull())
    .addColumn("purpose", "text", (c) => c.notNull())
    // SHA-256 of "<challenge id>:<code>"; the code itself is never stored.
    .addColumn("code_sha256", "text", (c) => c.notNull())
    .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("expires_at", "timestamptz", (c) => c.notNull())
    // Service-clock time of the last delivery (the resend limit).
    .addColumn("last_sent_at", "timestamptz", (c) => c.notNull())
    .addColumn("authorized_at", "timestamptz")
    .execute();
  // The live challenge of a subject: one per (platform, subject).
  await db.schema.createIndex("sca_challenges_subject_idx").on("sca_challenges").columns(["platform_id", "subject_type", "subject_id", "created_at"]).execute();

  await db.schema
    .createTable("sca_trusted_beneficiaries")
    .addColumn("platform_id", "text", (c) => c.notNull())
    .addColumn("customer_id", "text", (c) => c.notNull())
    .addColumn("external_account_id", "text", (c) => c.notNull())
    .addColumn("trusted_at", "timestamptz", (c) => c.notNull())
    .addPrimaryKeyConstraint("sca_trusted_beneficiaries_pk", ["platform_id", "external_account_id"])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("sca_trusted_beneficiaries").execute();
  await db.schema.dropTable("sca_challenges").execute();
}
