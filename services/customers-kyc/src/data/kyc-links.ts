import type { Kysely, Transaction } from "kysely";
import type { KycLink } from "../domain/types.js";
import type { CustomersKycDatabase, KycLinkRow } from "./tables.js";

type Db = Kysely<CustomersKycDatabase> | Transaction<CustomersKycDatabase>;

function toKycLink(r: KycLinkRow): KycLink {
  return {
    id: r.id,
    platformId: r.platform_id,
    customerId: r.customer_id,
    tokenSha256: r.token_sha256,
    redirectUrl: r.redirect_url,
    createdAt: r.created_at,
    expiresAt: r.expires_at,
    completedAt: r.completed_at,
  };
}

export async function insertKycLink(db: Db, l: KycLink): Promise<void> {
  await db
    .insertInto("kyc_links")
    .values({
      id: l.id,
      platform_id: l.platformId,
      customer_id: l.customerId,
      token_sha256: l.tokenSha256,
      redirect_url: l.redirectUrl,
      created_at: l.createdAt,
      expires_at: l.expiresAt,
      completed_at: l.completedAt,
    })
    .execute();
}

/** By token hash, across platforms: the token is the credential of the hosted page. */
export async function getKycLinkByToken(db: Db, tokenSha256: string, opts: { forUpdate?: boolean } = {}): Promise<KycLink | undefined> {
  let q = db.selectFrom("kyc_links").selectAll().where("token_sha256", "=", tokenSha256);
  if (opts.forUpdate) q = q.forUpdate();
  const row = await q.executeTakeFirst();
  return row && toKycLink(row);
}

/** Ends every open link of the customer at `now` (a new link voids the older ones). */
export async function expireOpenKycLinks(db: Db, platformId: string, customerId: string, now: Date): Promise<void> {
  await db
    .updateTable("kyc_links")
    .set({ expires_at: now })
    .where("platform_id", "=", platformId)
    .where("customer_id", "=", customerId)
    .where("completed_at", "is", null)
    .where("expires_at", ">", now)
    .execute();
}

export async function completeKycLink(db: Db, id: string, now: Date): Promise<void> {
  await db.updateTable("kyc_links").set({ completed_at: now }).where("id", "=", id).execute();
}
