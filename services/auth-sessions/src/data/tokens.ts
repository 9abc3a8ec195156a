import type { ExpressionBuilder, Kysely, SelectQueryBuilder, Transaction } from "kysely";
import { ClientIdTaken } from "../domain/ports.js";
import type { Permission, StoredToken, TokenFilter } from "../domain/types.js";
import type { AuthSessionsDatabase, TokenRow } from "./tables.js";

type Db = Kysely<AuthSessionsDatabase> | Transaction<AuthSessionsDatabase>;

function toToken(r: TokenRow): StoredToken {
  return {
    id: r.id,
    platformId: r.platform_id,
    name: r.name,
    permissions: r.permissions as Permission[],
    clientId: r.client_id,
    secretSha256: r.secret_sha256,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    deletedAt: r.deleted_at,
  };
}

function isUniqueViolation(err: unknown): boolean {
  return typeof err === "object" && err !== null && (err as { code?: unknown }).code === "23505";
}

export async function insertToken(db: Db, t: StoredToken): Promise<void> {
  try {
    await db
      .insertInto("tokens")
      .values({
        id: t.id,
        platform_id: t.platformId,
        name: t.name,
        permissions: JSON.stringify(t.permissions),
        client_id: t.clientId,
        secret_sha256: t.secretSha256,
        created_at: t.createdAt,
        updated_at: t.updatedAt,
        deleted_at: t.deletedAt,
      })
      .execute();
  } catch (err) {
    // client_id is the only unique column a caller can choose (ids are fresh uuidv7s).
    if (isUniqueViolation(err)) throw new ClientIdTaken(t.clientId);
    throw err;
  }
}

export async function clientIdExists(db: Db, clientId: string): Promise<boolean> {
  const row = await db.selectFrom("tokens").select("id").where("client_id", "=", clientId).executeTakeFirst();
  return row !== undefined;
}

export async function findTokenByClientId(db: Db, clientId: string): Promise<StoredToken | undefined> {
  const row = await db.selectFrom("tokens").selectAll().where("client_id", "=", clientId).executeTakeFirst();
  return row && toToken(row);
}

export async function getLiveToken(db: Db, platformId: string, id: string): Promise<StoredToken | undefined> {
  const row = await db
    .selectFrom("tokens")
    .selectAll()
    .where("platform_id", "=", platformId)
    .where("id", "=", id)
    .where("deleted_at", "is", null)
    .executeTakeFirst();
  return row && toToken(row);
}

/** The filters shared by the page query and its count, so totalCount matches what paging walks. */
function filtered<O>(q: SelectQueryBuilder<AuthSessionsDatabase, "tokens", O>, f: TokenFilter) {
  let out = q.where("platform_id", "=", f.platformId).where("deleted_at", "is", null);
  if (f.name !== undefined) out = out.where("name", "=", f.name);
  if (f.created?.after) out = out.where("created_at", ">=", f.created.after);
  if (f.created?.before) out = out.where("created_at", "<=", f.created.before);
  if (f.updated?.after) out = out.where("updated_at", ">=", f.updated.after);
  if (f.updated?.before) out = out.where("updated_at", "<=", f.updated.before);
  return out;
}

export async function listLiveTokens(
  db: Db,
  f: TokenFilter,
  page: { limit: number; after?: { createdAt: Date; id: string } },
): Promise<StoredToken[]> {
  let q = filtered(db.selectFrom("tokens").selectAll(), f);
  const after = page.after;
  if (after) {
    // Newest first, so the next page holds rows strictly below the last (created_at, id).
    q = q.where((eb: ExpressionBuilder<AuthSessionsDatabase, "tokens">) =>
      eb(eb.refTuple("created_at", "id"), "<", eb.tuple(after.createdAt, after.id)),
    );
  }
  const rows = await q.orderBy("created_at", "desc").orderBy("id", "desc").limit(page.limit).execute();
  return rows.map(toToken);
}

export async function countLiveTokens(db: Db, f: TokenFilter): Promise<number> {
  const row = await filtered(db.selectFrom("tokens").select((eb) => eb.fn.countAll<bigint | number | string>().as("n")), f).executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function markTokenDeleted(db: Db, platformId: string, id: string, at: Date): Promise<boolean> {
  const res = await db
    .updateTable("tokens")
    .set({ deleted_at: at, updated_at: at })
    .where("platform_id", "=", platformId)
    .where("id", "=", id)
    .where("deleted_at", "is", null)
    .executeTakeFirst();
  return res.numUpdatedRows > 0n;
}
