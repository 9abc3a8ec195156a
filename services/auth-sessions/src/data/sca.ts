import { inTransaction } from "@corridor/kit";
import type { ColumnType, Kysely, Selectable, Transaction } from "kysely";
import type { ScaStore, ScaSubjectType, ScaTransact, StoredScaChallenge, StoredTotpFactor } from "../domain/sca/ports.js";
import { totpAad } from "../domain/sca/sca.js";
import type { SealedRowsTransact } from "../domain/wallet/reencrypt.js";
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

/** migrations/20261229000000_sca_factors.ts */
export interface ScaFactorsTable {
  platform_id: string;
  customer_id: string;
  factor: string;
  secret_sealed: Uint8Array;
  key_id: string;
  created_at: Timestamp;
  confirmed_at: ColumnType<Date | null, Date | null, Date | null>;
  last_step: ColumnType<string | number, number, number>;
  recovery_codes_sha256: string;
}

export interface ScaLoginSecurityTable {
  platform_id: string;
  customer_id: string;
  failed_attempts: number;
  locked_until: ColumnType<Date | null, Date | null, Date | null>;
  suspended: boolean;
}

/** The SCA tables beside the rest of the auth_sessions schema. */
export interface ScaDatabase extends AuthSessionsDatabase {
  sca_challenges: ScaChallengesTable;
  sca_trusted_beneficiaries: ScaTrustedBeneficiariesTable;
  sca_factors: ScaFactorsTable;
  sca_login_security: ScaLoginSecurityTable;
}

const totpFromRow = (r: Selectable<ScaFactorsTable>): StoredTotpFactor => ({
  platformId: r.platform_id,
  customerId: r.customer_id,
  secretSealed: new Uint8Array(r.secret_sealed),
  keyId: r.key_id,
  createdAt: r.created_at,
  confirmedAt: r.confirmed_at,
  lastStep: Number(r.last_step),
  recoveryCodesSha256: JSON.parse(r.recovery_codes_sha256) as string[],
});

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
    totp: {
      async get(platformId, customerId, opts = {}) {
        let q = trx.selectFrom("sca_factors").selectAll().where("platform_id", "=", platformId).where("customer_id", "=", customerId).where("factor", "=", "TOTP");
        if (opts.forUpdate) q = q.forUpdate();
        const r = await q.executeTakeFirst();
        return r ? totpFromRow(r) : undefined;
      },
      async put(f) {
        const values = {
          platform_id: f.platformId,
          customer_id: f.customerId,
          factor: "TOTP",
          secret_sealed: f.secretSealed,
          key_id: f.keyId,
          created_at: f.createdAt,
          confirmed_at: f.confirmedAt,
          last_step: f.lastStep,
          recovery_codes_sha256: JSON.stringify(f.recoveryCodesSha256),
        };
        await trx
          .insertInto("sca_factors")
          .values(values)
          .onConflict((oc) =>
            oc
              .columns(["platform_id", "customer_id", "factor"])
              .doUpdateSet({ secret_sealed: values.secret_sealed, key_id: values.key_id, created_at: values.created_at, last_step: 0, recovery_codes_sha256: "[]" })
              // A confirmed factor is never replaced by a new enrolment.
              .where("sca_factors.confirmed_at", "is", null),
          )
          .execute();
      },
      async confirm(platformId, customerId, at, step, recoveryCodesSha256) {
        await trx
          .updateTable("sca_factors")
          .set({ confirmed_at: at, last_step: step, recovery_codes_sha256: JSON.stringify(recoveryCodesSha256) })
          .where("platform_id", "=", platformId)
          .where("customer_id", "=", customerId)
          .where("factor", "=", "TOTP")
          .execute();
      },
      async use(platformId, customerId, lastStep, recoveryCodesSha256) {
        await trx
          .updateTable("sca_factors")
          .set({ last_step: lastStep, recovery_codes_sha256: JSON.stringify(recoveryCodesSha256) })
          .where("platform_id", "=", platformId)
          .where("customer_id", "=", customerId)
          .where("factor", "=", "TOTP")
          .execute();
      },
    },
    loginSecurity: {
      async get(platformId, customerId, opts = {}) {
        if (opts.forUpdate) {
          await trx.insertInto("sca_login_security").values({ platform_id: platformId, customer_id: customerId, failed_attempts: 0, locked_until: null, suspended: false }).onConflict((oc) => oc.columns(["platform_id", "customer_id"]).doNothing()).execute();
        }
        let q = trx.selectFrom("sca_login_security").selectAll().where("platform_id", "=", platformId).where("customer_id", "=", customerId);
        if (opts.forUpdate) q = q.forUpdate();
        const r = await q.executeTakeFirst();
        return r ? { failedAttempts: r.failed_attempts, lockedUntil: r.locked_until, suspended: r.suspended } : { failedAttempts: 0, lockedUntil: null, suspended: false };
      },
      async set(platformId, customerId, state) {
        await trx
          .updateTable("sca_login_security")
          .set({ failed_attempts: state.failedAttempts, locked_until: state.lockedUntil, suspended: state.suspended })
          .where("platform_id", "=", platformId)
          .where("customer_id", "=", customerId)
          .execute();
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

/**
 * The TOTP secrets as the wallet-key-reencrypt worker moves them to the current key (they are
 * sealed under the wallet encryption key too). A row's id is "<platform id> <customer id>".
 */
export function totpSealedRowsOver(db: Kysely<ScaDatabase>): SealedRowsTransact {
  return (work) =>
    inTransaction(db, (trx: Transaction<ScaDatabase>) =>
      work({
        async notSealedUnder(currentKeyId, after, limit) {
          const [afterPlatform = "", afterCustomer = ""] = after.split(" ");
          const rows = await trx
            .selectFrom("sca_factors")
            .select(["platform_id", "customer_id", "secret_sealed", "key_id"])
            .where("factor", "=", "TOTP")
            .where("key_id", "!=", currentKeyId)
            .where((eb) => eb.or([eb("platform_id", ">", afterPlatform), eb.and([eb("platform_id", "=", afterPlatform), eb("customer_id", ">", afterCustomer)])]))
            .orderBy("platform_id")
            .orderBy("customer_id")
            .limit(limit)
            .forUpdate()
            .skipLocked()
            .execute();
          return rows.map((r) => ({ id: `${r.platform_id} ${r.customer_id}`, associatedData: totpAad(r.platform_id, r.customer_id), sealed: new Uint8Array(r.secret_sealed), keyId: r.key_id }));
        },
        async reseal(id, fromKeyId, { sealed, keyId }) {
          const [platformId = "", customerId = ""] = id.split(" ");
          const r = await trx
            .updateTable("sca_factors")
            .set({ secret_sealed: sealed, key_id: keyId })
            .where("platform_id", "=", platformId)
            .where("customer_id", "=", customerId)
            .where("factor", "=", "TOTP")
            .where("key_id", "=", fromKeyId ?? "")
            .executeTakeFirst();
          return Number(r.numUpdatedRows) === 1;
        },
        async countByKeyId() {
          const rows = await trx.selectFrom("sca_factors").select(["key_id", (eb) => eb.fn.countAll<string>().as("rows")]).where("factor", "=", "TOTP").groupBy("key_id").execute();
          return rows.map((r) => ({ keyId: r.key_id, rows: Number(r.rows) }));
        },
      }),
    );
}
