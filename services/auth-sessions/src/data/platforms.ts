import { sql, type Kysely, type Transaction } from "kysely";
import type { Platform } from "../domain/types.js";
import type { AuthSessionsDatabase, PlatformRow } from "./tables.js";

type Db = Kysely<AuthSessionsDatabase> | Transaction<AuthSessionsDatabase>;

function toPlatform(r: PlatformRow): Platform {
  return { id: r.id, name: r.name, environment: r.environment, isRegulated: r.is_regulated, createdAt: r.created_at };
}

export async function insertPlatform(db: Db, p: Platform): Promise<void> {
  await db
    .insertInto("platforms")
    .values({ id: p.id, name: p.name, environment: p.environment, is_regulated: p.isRegulated, created_at: p.createdAt })
    .execute();
}

export async function getPlatform(db: Db, id: string): Promise<Platform | undefined> {
  const row = await db.selectFrom("platforms").selectAll().where("id", "=", id).executeTakeFirst();
  return row && toPlatform(row);
}

export async function listPlatforms(db: Db): Promise<Platform[]> {
  const rows = await db.selectFrom("platforms").selectAll().orderBy("created_at", "asc").orderBy("id", "asc").execute();
  return rows.map(toPlatform);
}

/** The deployment's identity row and the database it lives in. */
export async function getDeployment(db: Db): Promise<{ id: string; createdAt: Date; database: string; platformCount: number }> {
  const row = await db
    .selectFrom("deployment")
    .select(["id", "created_at"])
    .select((eb) => [sql<string>`current_database()`.as("database"), eb.selectFrom("platforms").select(eb.fn.countAll<number>().as("n")).as("platform_count")])
    .executeTakeFirstOrThrow();
  return { id: row.id, createdAt: row.created_at, database: row.database, platformCount: Number(row.platform_count ?? 0) };
}
