import { sql, type Kysely } from "kysely";

// Bulk imports of customers (POST /customers/bulk/csv): one job per accepted file, and the file's
// rows as parsed at upload. The worker handles the lowest PENDING row of a job at a time; a row's
// customer and its CREATED mark commit together, so a restart resumes without creating twice.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("customer_imports")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("platform_id", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("file_name", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("sha256", "text", (c) => c.notNull())
    .addColumn("total", "integer", (c) => c.notNull())
    .addColumn("processed", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("successful", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("failed", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("updated_at", "timestamptz", (c) => c.notNull())
    .addColumn("completed_at", "timestamptz")
    .execute();
  // The same file twice is one job.
  await db.schema.createIndex("customer_imports_file").on("customer_imports").columns(["platform_id", "sha256"]).unique().execute();
  await db.schema
    .createIndex("customer_imports_open")
    .on("customer_imports")
    .columns(["created_at", "id"])
    .where(sql.ref("status"), "in", ["PENDING", "PROCESSING"])
    .execute();

  await db.schema
    .createTable("customer_import_rows")
    .addColumn("job_id", "text", (c) => c.notNull().references("customer_imports.id"))
    .addColumn("row_number", "integer", (c) => c.notNull())
    .addColumn("line", "integer", (c) => c.notNull())
    .addColumn("platform_id", "text", (c) => c.notNull())
    .addColumn("fields", "jsonb", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("customer_id", "text")
    .addColumn("error", "jsonb")
    .addPrimaryKeyConstraint("customer_import_rows_pk", ["job_id", "row_number"])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("customer_import_rows").execute();
  await db.schema.dropTable("customer_imports").execute();
}
