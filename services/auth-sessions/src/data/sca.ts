import { inTransaction } from "@corridor/kit";
import type { ColumnType, Kysely, Selectable, Transaction } from "kysely";
import type { LivenessStatus, ResetStatus, ScaStore, ScaSubjectType, ScaTransact, StoredLivenessCheck, StoredScaChallenge, StoredTotpFactor } from "../domain/sca/ports.js";
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

/** migrations/20261230000000_sca_factor_resets.ts */
export interface ScaFactorResetsTable {
  id: string;
  platform_id: string;
  customer_id: string;
  factor: string;
  status: string;
  created_at: Timestamp;
  expires_at: Timestamp;
  updated_at: Timestamp;
  started_at: Timestamp;
}

export interface ScaLivenessChecksTable {
  id: string;
  platform_id: string;
  customer_id: string;
  reset_id: string;
  environment: string;
  status: string;
  token_sha256: string;
  reason: ColumnType<string, string | undefined, string>;
  selfie: ColumnType<Uint8Array | null, Uint8Array | null | undefined, Uint8Array | null>;
  selfie_content_type: ColumnType<string, string | undefined, string>;
  selfie_sha256: ColumnType<string, string | undefined, string>;
  selfie_size_bytes: ColumnType<number, number | undefined, number>;
  created_at: Timestamp;
  submitted_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  decided_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  expires_at: Timestamp;
}

export interface ScaMobileNumbersTable {
  platform_id: string;
  customer_id: string;
  country_code: string;
  number: string;
  enrolled_at: Timestamp;
}

/** The SCA tables beside the rest of the auth_sessions schema. */
export interface ScaDatabase extends AuthSessionsDatabase {
  sca_challenges: ScaChallengesTable;
  sca_trusted_beneficiaries: ScaTrustedBeneficiariesTable;
  sca_factors: ScaFactorsTable;
  sca_login_security: ScaLoginSecurityTable;
  sca_factor_resets: ScaFactorResetsTable;
  sca_liveness_checks: ScaLivenessChecksTable;
  sca_mobile_numbers: ScaMobileNumbersTable;
}

/** Every column but the selfie's bytes. */
const LIVENESS_COLUMNS = [
  "id",
  "platform_id",
  "customer_id",
  "reset_id",
  "environment",
  "status",
  "token_sha256",
  "reason",
  "selfie_content_type",
  "selfie_sha256",
  "selfie_size_bytes",
  "created_at",
  "submitted_at",
  "decided_at",
  "expires_at",
] as const;

const livenessFromRow = (r: Omit<Selectable<ScaLivenessChecksTable>, "selfie">): StoredLivenessCheck => ({
  id: r.id,
  platformId: r.platform_id,
  customerId: r.customer_id,
  resetId: r.reset_id,
  environment: r.environment as "SANDBOX" | "PRODUCTION",
  status: r.status as LivenessStatus,
  tokenSha256: r.token_sha256,
  reason: r.reason,
  selfieContentType: r.selfie_content_type,
  selfieSha256: r.selfie_sha256,
  selfieSizeBytes: Number(r.selfie_size_bytes),
  createdAt: r.created_at,
  submittedAt: r.submitted_at,
  decidedAt: r.decided_at,
  expiresAt: r.expires_at,
});

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
      async remove(platformId, customerId) {
        await trx.deleteFrom("sca_factors").where("platform_id", "=", platformId).where("customer_id", "=", customerId).where("factor", "=", "TOTP").execute();
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
    mobile: {
      async set(platformId, customerId, countryCode, number, at) {
        await trx
          .insertInto("sca_mobile_numbers")
          .values({ platform_id: platformId, customer_id: customerId, country_code: countryCode, number, enrolled_at: at })
          .onConflict((oc) => oc.columns(["platform_id", "customer_id"]).doUpdateSet({ country_code: countryCode, number, enrolled_at: at }))
          .execute();
      },
      async get(platformId, customerId) {
        const r = await trx.selectFrom("sca_mobile_numbers").select(["country_code", "number"]).where("platform_id", "=", platformId).where("customer_id", "=", customerId).executeTakeFirst();
        return r ? { countryCode: r.country_code, number: r.number } : undefined;
      },
    },
    resets: {
      async insert(r) {
        await trx
          .insertInto("sca_factor_resets")
          .values({ id: r.id, platform_id: r.platformId, customer_id: r.customerId, factor: r.factor, status: r.status, created_at: r.createdAt, expires_at: r.expiresAt, updated_at: r.updatedAt, started_at: r.startedAt })
          .execute();
      },
      async get(platformId, customerId, id, opts = {}) {
        let q = trx.selectFrom("sca_factor_resets").selectAll().where("id", "=", id).where("platform_id", "=", platformId).where("customer_id", "=", customerId);
        if (opts.forUpdate) q = q.forUpdate();
        const r = await q.executeTakeFirst();
        return r
          ? { id: r.id, platformId: r.platform_id, customerId: r.customer_id, factor: r.factor as "SMS_OTP" | "TOTP", status: r.status as ResetStatus, createdAt: r.created_at, expiresAt: r.expires_at, startedAt: r.started_at, updatedAt: r.updated_at }
          : undefined;
      },
      async setStatus(id, status, at) {
        await trx.updateTable("sca_factor_resets").set({ status, updated_at: at }).where("id", "=", id).execute();
      },
      async startedSince(platformId, customerId, since) {
        const rows = await trx.selectFrom("sca_factor_resets").select("started_at").where("platform_id", "=", platformId).where("customer_id", "=", customerId).where("started_at", ">=", since).execute();
        return rows.map((r) => r.started_at);
      },
    },
    liveness: {
      async insert(c) {
        await trx
          .insertInto("sca_liveness_checks")
          .values({
            id: c.id,
            platform_id: c.platformId,
            customer_id: c.customerId,
            reset_id: c.resetId,
            environment: c.environment,
            status: c.status,
            token_sha256: c.tokenSha256,
            reason: c.reason,
            created_at: c.createdAt,
            expires_at: c.expiresAt,
          })
          .execute();
      },
      async get(id, opts = {}) {
        let q = trx.selectFrom("sca_liveness_checks").select(LIVENESS_COLUMNS).where("id", "=", id);
        if (opts.forUpdate) q = q.forUpdate();
        const r = await q.executeTakeFirst();
        return r ? livenessFromRow(r) : undefined;
      },
      async byToken(tokenSha256, opts = {}) {
        let q = trx.selectFrom("sca_liveness_checks").select(LIVENESS_COLUMNS).where("token_sha256", "=", tokenSha256);
        if (opts.forUpdate) q = q.forUpdate();
        const r = await q.executeTakeFirst();
        return r ? livenessFromRow(r) : undefined;
      },
      async list(filter) {
        let q = trx.selectFrom("sca_liveness_checks").select(LIVENESS_COLUMNS).orderBy("created_at").orderBy("id").limit(filter.limit);
        if (filter.status) q = q.where("status", "=", filter.status);
        if (filter.platformId) q = q.where("platform_id", "=", filter.platformId);
        return (await q.execute()).map(livenessFromRow);
      },
      async submit(id, selfie, at) {
        await trx
          .updateTable("sca_liveness_checks")
          .set({ status: "SUBMITTED", selfie: selfie.content, selfie_content_type: selfie.contentType, selfie_sha256: selfie.sha256, selfie_size_bytes: selfie.content.length, submitted_at: at })
          .where("id", "=", id)
          .execute();
      },
      async decide(id, status, reason, at) {
        await trx.updateTable("sca_liveness_checks").set({ status, reason, decided_at: at }).where("id", "=", id).execute();
      },
      async selfie(id) {
        const r = await trx.selectFrom("sca_liveness_checks").select("selfie").where("id", "=", id).executeTakeFirst();
        return r?.selfie ? new Uint8Array(r.selfie) : undefined;
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
