import { inTransaction } from "@corridor/kit";
import type { Kysely, Transaction } from "kysely";
import type { ContactChannel, ContactStore, ContactTransact, StoredContactCode } from "../domain/contact-verification.js";
import { getCustomer } from "./customers.js";
import type { CustomersKycDatabase } from "./tables.js";

type Trx = Transaction<CustomersKycDatabase>;

function contactStore(trx: Trx): ContactStore {
  const codeOf = (platformId: string, customerId: string, channel: ContactChannel) =>
    trx.selectFrom("contact_verification_codes").where("platform_id", "=", platformId).where("customer_id", "=", customerId).where("channel", "=", channel);
  return {
    customer: (platformId, customerId, opts) => getCustomer(trx, platformId, customerId, opts),

    async lockCode(platformId, customerId, channel): Promise<StoredContactCode | undefined> {
      const r = await codeOf(platformId, customerId, channel).selectAll().forUpdate().executeTakeFirst();
      return (
        r && {
          platformId: r.platform_id,
          customerId: r.customer_id,
          channel: r.channel,
          sentTo: r.sent_to,
          codeSha256: r.code_sha256,
          attempts: r.attempts,
          createdAt: r.created_at,
          expiresAt: r.expires_at,
        }
      );
    },

    async putCode(c) {
      const row = {
        platform_id: c.platformId,
        customer_id: c.customerId,
        channel: c.channel,
        sent_to: c.sentTo,
        code_sha256: c.codeSha256,
        attempts: c.attempts,
        created_at: c.createdAt,
        expires_at: c.expiresAt,
      };
      await trx
        .insertInto("contact_verification_codes")
        .values(row)
        .onConflict((oc) =>
          oc.columns(["platform_id", "customer_id", "channel"]).doUpdateSet({ sent_to: row.sent_to, code_sha256: row.code_sha256, attempts: row.attempts, created_at: row.created_at, expires_at: row.expires_at }),
        )
        .execute();
    },

    async setAttempts(platformId, customerId, channel, attempts) {
      await trx
        .updateTable("contact_verification_codes")
        .set({ attempts })
        .where("platform_id", "=", platformId)
        .where("customer_id", "=", customerId)
        .where("channel", "=", channel)
        .execute();
    },

    async removeCode(platformId, customerId, channel) {
      await trx
        .deleteFrom("contact_verification_codes")
        .where("platform_id", "=", platformId)
        .where("customer_id", "=", customerId)
        .where("channel", "=", channel)
        .execute();
    },

    async markVerified(platformId, customerId, channel, value, at) {
      if (channel !== "EMAIL") throw new Error(`no ${channel} is kept on customers`);
      await trx.updateTable("customers").set({ verified_email: value, updated_at: at }).where("platform_id", "=", platformId).where("id", "=", customerId).execute();
    },
  };
}

/** A ContactTransact over `db`: each unit of work gets the contact-verification store on one transaction. */
export function contactTransactOver(db: Kysely<CustomersKycDatabase>): ContactTransact {
  return (work) => inTransaction(db, (trx) => work(contactStore(trx)));
}
