import type { Kysely, Transaction } from "kysely";
import type { Invitation } from "../domain/types.js";
import type { CustomersKycDatabase, InvitationRow } from "./tables.js";

type Db = Kysely<CustomersKycDatabase> | Transaction<CustomersKycDatabase>;

function toInvitation(r: InvitationRow): Invitation {
  return {
    code: r.code,
    platformId: r.platform_id,
    inviterCustomerId: r.inviter_customer_id,
    inviterUma: r.inviter_uma,
    status: r.status,
    firstName: r.first_name,
    amountToSend: r.amount_to_send,
    amountCurrency: r.amount_currency,
    inviteeUma: r.invitee_uma,
    expiresAt: r.expires_at,
    claimedAt: r.claimed_at,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** Codes are drawn at random; a collision (astronomically rare) answers false and the caller draws again. */
export async function insertInvitation(db: Db, i: Invitation): Promise<boolean> {
  const res = await db
    .insertInto("invitations")
    .values({
      code: i.code,
      platform_id: i.platformId,
      inviter_customer_id: i.inviterCustomerId,
      inviter_uma: i.inviterUma,
      status: i.status,
      first_name: i.firstName,
      amount_to_send: i.amountToSend,
      amount_currency: i.amountCurrency,
      invitee_uma: i.inviteeUma,
      expires_at: i.expiresAt,
      claimed_at: i.claimedAt,
      created_at: i.createdAt,
      updated_at: i.updatedAt,
    })
    .onConflict((oc) => oc.column("code").doNothing())
    .executeTakeFirst();
  return (res.numInsertedOrUpdatedRows ?? 0n) > 0n;
}

export async function getInvitation(db: Db, platformId: string, code: string, opts: { forUpdate?: boolean } = {}): Promise<Invitation | undefined> {
  let q = db.selectFrom("invitations").selectAll().where("platform_id", "=", platformId).where("code", "=", code);
  if (opts.forUpdate) q = q.forUpdate();
  const row = await q.executeTakeFirst();
  return row && toInvitation(row);
}

export async function updateInvitation(db: Db, i: Invitation): Promise<void> {
  await db
    .updateTable("invitations")
    .set({ status: i.status, invitee_uma: i.inviteeUma, claimed_at: i.claimedAt, updated_at: i.updatedAt })
    .where("platform_id", "=", i.platformId)
    .where("code", "=", i.code)
    .execute();
}
