import { sql, type Kysely } from "kysely";

// The operator's KYC review queue (the KYC provider connector that ships) and KYC documents.
// A review is one subject's (customer's or beneficial owner's) verification request and its
// decision; documents keep their bytes here, in a bytea column, with their SHA-256 and size
// (an S3-compatible store is a later step: docs/kyc.md).

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("kyc_reviews")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("platform_id", "text", (c) => c.notNull())
    .addColumn("customer_id", "text", (c) => c.notNull().references("customers.id"))
    .addColumn("subject_kind", "text", (c) => c.notNull())
    .addColumn("subject_id", "text", (c) => c.notNull())
    .addColumn("verification_id", "text")
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("reason", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("submissions", "integer", (c) => c.notNull().defaultTo(1))
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("updated_at", "timestamptz", (c) => c.notNull())
    .execute();
  // At most one open (SUBMITTED or MORE_INFO_REQUESTED) review per subject.
  await db.schema
    .createIndex("kyc_reviews_open_subject")
    .on("kyc_reviews")
    .columns(["platform_id", "subject_id"])
    .unique()
    .where(sql.ref("status"), "in", [sql.lit("SUBMITTED"), sql.lit("MORE_INFO_REQUESTED")])
    .execute();
  await db.schema.createIndex("kyc_reviews_status").on("kyc_reviews").columns(["status", "created_at"]).execute();

  await db.schema
    .createTable("kyc_documents")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("platform_id", "text", (c) => c.notNull())
    .addColumn("customer_id", "text", (c) => c.notNull().references("customers.id"))
    .addColumn("document_holder", "text", (c) => c.notNull())
    .addColumn("document_type", "text", (c) => c.notNull())
    .addColumn("side", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("country", "text", (c) => c.notNull())
    .addColumn("document_number", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("issuing_authority", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("file_name", "text", (c) => c.notNull())
    .addColumn("content_type", "text", (c) => c.notNull())
    .addColumn("size_bytes", "integer", (c) => c.notNull())
    .addColumn("sha256", "text", (c) => c.notNull())
    .addColumn("content", "bytea", (c) => c.notNull())
    .addColumn("used_by_review_id", "text")
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("updated_at", "timestamptz", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("kyc_documents_holder").on("kyc_documents").columns(["platform_id", "document_holder"]).execute();
  await db.schema.createIndex("kyc_documents_customer").on("kyc_documents").columns(["platform_id", "customer_id"]).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("kyc_documents").execute();
  await db.schema.dropTable("kyc_reviews").execute();
}
