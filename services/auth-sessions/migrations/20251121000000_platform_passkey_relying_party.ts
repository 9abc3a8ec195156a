import { sql, type Kysely } from "kysely";

// A platform's own WebAuthn relying party (id + allowed origins). Empty values mean the
// deployment's default relying party (CORRIDOR_PASSKEY_RP_ID / CORRIDOR_PASSKEY_ORIGINS) applies,
// so existing platforms keep verifying exactly as before.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("platform_configs")
    .addColumn("passkey_rp_id", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("passkey_origins", "jsonb", (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("platform_configs").dropColumn("passkey_origins").dropColumn("passkey_rp_id").execute();
}
