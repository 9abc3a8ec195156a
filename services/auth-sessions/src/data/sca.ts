import { inTransaction } from "@corridor/kit";
import type { ColumnType, Kysely, Selectable, Transaction } from "kysely";
import type { ScaStore, ScaSubjectType, ScaTransact, StoredScaChallenge } from "../domain/sca/ports.js";
import type { AuthSessionsDatabase } from "./tables.js";

type Timestamp = ColumnType<Date, Date, Date>;

/** migrations/20261228100000_sca.ts */
export interface ScaChallengesTable {
  id: string;
  platform_id: string;
  customer_id: string;
  subject_type: string;
  subject_id: string;
  factor: string;
  purpose: string;
  code_sha256: string;
  attempts: number;
  created_at: Timestamp;
  expires_at: Timestamp;
  last_sent_at: Timestamp;
  authorized_at: ColumnType<Date | null, Date | null, Date | null>;
}

export interface ScaTrustedBeneficiariesTable {
  platform_id: string;
  customer_id: string;
  external_account_id: string;
  trusted_at: Timestamp;
}

/** The SCA tables beside the rest of the auth_sessions schema. */
export interface ScaDatabase extends AuthSessionsDatabase {
  sca_challenges: ScaChallengesTable;
  sca_trusted_beneficiaries: ScaTrustedBeneficiariesTable;
}

const fromRow = (r: Selectable<ScaChallengesTable>): StoredScaChallenge => ({
  id: r.id,
  platformId: r.platform_id,
  customerId: r.customer_id,
  subjectType: r.subject_type as ScaSubjectType,
  subjectId: r.subject_id,
  factor: "SMS_OTP",
  purpose: r.purpose,
  codeSha256: r.code_sha256,
  attempts: r.attempts,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  lastSentAt: r.last_sent_at,
  authorizedAt: r.authorized_at,
});

export function scaStore(trx: Kysely<ScaDatabase>): ScaStore {
  return {
    async environmentOf(platformId) {
      const r = await trx.selectFrom("platforms").select("environment").where("id", "=", platformId).executeTakeFirst();
      return r?.environment;
    },
    challenges: {
      async insert(c) {
        await trx
          .insertInto("sca_challenges")
          .values({
            id: c.id,
            platform_id: c.platformId,
            customer_id: c.customerId,
            subject_type: c.subjectType,
            subject_id: c.subjectId,
            factor: c.factor,
            purpose: c.purpose,
            code_sha256: c.codeSha256,
            attempts: c.attempts,
            created_at: c.createdAt,
            expires_at: c.expiresAt,
            last_sent_at: c.lastSentAt,
            authorized_at: c.authorizedAt,
          })
          .execute();
      },
      async latest(platformId, subjectType, subjectId, opts = {}) {
        let q = trx
          .selectFrom("sca_challenges")
          .selectAll()
          .where("platform_id", "=", platformId)
          .where("subject_type", "=", subjectType)
          .where("subject_id", "=", subjectId)
          .orderBy("created_at", "desc")
          .orderBy("id", "desc")
          .limit(1);
        if (opts.forUpdate) q = q.forUpdate();
        const r = await q.executeTakeFirst();
        return r ? fromRow(r) : undefined;
      },
      async setAttempts(id, attempts) {
        await trx.updateTable("sca_challenges").set({ attempts }).where("id", "=", id).execute();
      },
      async setCode(id, codeSha256, lastSentAt) {
        await trx.updateTable("sca_challenges").set({ code_sha256: codeSha256, last_sent_at: lastSentAt }).where("id", "=", id).execute();
      },
      async markAuthorized(id, at) {
        await trx.updateTable("sca_challenges").set({ authorized_at: at }).where("id", "=", id).execute();
      },
    },
    trusted: {
      async isTrusted(platformId, externalAccountId) {
        const r = await trx
          .selectFrom("sca_trusted_beneficiaries")
          .select("external_account_id")
          .where("platform_id", "=", platformId)
          .where("external_account_id", "=", externalAccountId)
          .executeTakeFirst();
        return !!r;
      },
      async trust(platformId, customerId, externalAccountId, at) {
        await trx
          .insertInto("sca_trusted_beneficiaries")
          .values({ platform_id: platformId, customer_id: customerId, external_account_id: externalAccountId, trusted_at: at })
          .onConflict((oc) => oc.columns(["platform_id", "external_account_id"]).doNothing())
          .execute();
      },
      async untrust(platformId, externalAccountId) {
        await trx.deleteFrom("sca_trusted_beneficiaries").where("platform_id", "=", platformId).where("external_account_id", "=", externalAccountId).execute();
      },
    },
  };
}

export function scaTransactOver(db: Kysely<ScaDatabase>): ScaTransact {
  return (work) => inTransaction(db, (trx: Transaction<ScaDatabase>) => work(scaStore(trx)));
}
