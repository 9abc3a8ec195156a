import { newId } from "@corridor/kit";
import { type Kysely } from "kysely";

// The deployment's identity: one row, drawn when the database is first migrated. The operator CLI
// prints it (PlatformAdminService.GetDeployment) before it acts, so two deployments on one machine
// are told apart even when both answer on the same port.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("deployment")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .execute();
  await db.insertInto("deployment").values({ id: newId("Deployment"), created_at: new Date() }).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("deployment").execute();
}
